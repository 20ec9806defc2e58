# Shared by scripts/test-debian13 and scripts/bench --debian13: the Debian 13 root (Open MPI 5.0,
# MPICH 4.2) made with debootstrap, and commands run inside it. Source after common.sh.
#
# The root lives outside the checkout (TSMPI_DEBIAN13_ROOT, default /var/cache/tsmpi/debian13)
# so that a fresh clone reuses it; it is made once from Debian's registry
# (TSMPI_DEBIAN_MIRROR); the packages inside are installed by the scripts run there, as on the
# host. The checkout is bound into the root at the same path, with /proc, /sys, /dev and /dev/shm
# (hwloc, shared memory). Needs root (debootstrap, chroot, mount).
debian13_rootfs=${TSMPI_DEBIAN13_ROOT:-/var/cache/tsmpi/debian13}
debian13_mirror=${TSMPI_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# Makes the root if it does not exist: in a temporary directory renamed when complete, so an
# interrupted debootstrap is never mistaken for a root.
debian13_make_root() {
  local rootfs=$debian13_rootfs
  [ -x "$rootfs/usr/bin/apt-get" ] && return 0
  if ! command -v debootstrap >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
  fi
  echo "== debian13: debootstrap trixie into $rootfs ($debian13_mirror)"
  # Never delete through a mount (an interrupted run may have left its binds).
  if grep -q " $rootfs.tmp/" /proc/mounts; then
    echo "debian13: $rootfs.tmp has mounts under it; unmount them first" >&2
    return 1
  fi
  rm -rf --one-file-system "$rootfs.tmp"
  mkdir -p "$(dirname "$rootfs")"
  debootstrap --variant=minbase --include=ca-certificates trixie "$rootfs.tmp" "$debian13_mirror" >"$rootfs.log" 2>&1 ||
    { tail -20 "$rootfs.log"; echo "debian13: debootstrap FAILED (log: $rootfs.log)"; return 1; }
  # What debootstrap mounted and did not unmount (its /proc, /sys) would lie under the binds.
  local m
  for m in $(awk -v p="$rootfs.tmp/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m" || true; done
  mv "$rootfs.tmp" "$rootfs"
}

# The binds debian13_run made, removed after its command (and at exit, if interrupted).
debian13_mounts=()
debian13_unmount() {
  local i
  for ((i = ${#debian13_mounts[@]} - 1; i >= 0; i--)); do umount -l "${debian13_mounts[$i]}" 2>/dev/null || true; done
  debian13_mounts=()
  # What ip netns (scripts/test-hosts) mounted inside the root.
  mountpoint -q "$debian13_rootfs/run/netns" && umount -l "$debian13_rootfs/run/netns" 2>/dev/null
  return 0
}

# debian13_run VAR=VALUE... -- COMMAND...: COMMAND inside the root with only the variables given
# (and PATH, HOME, LANG), the mounts made for it and removed after it.
debian13_run() {
  local rootfs=$debian13_rootfs vars=() m rc=0
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  trap debian13_unmount EXIT
  # A fresh, private bind of the root onto itself, and every bind on top of it, whatever is
  # mounted there already: a mount left under the root (by debootstrap, an interrupted run) is
  # hidden by the new bind, so asking whether a path "is a mount point" would wrongly say yes.
  # The root a mount point of its own also lets ip netns (scripts/test-hosts) remount / inside.
  mount --bind "$rootfs" "$rootfs" && debian13_mounts+=("$rootfs") && mount --make-private "$rootfs" ||
    { echo "debian13: cannot bind $rootfs onto itself" >&2; debian13_unmount; return 1; }
  for m in /proc /sys /dev /dev/shm "$ROOT"; do
    mkdir -p "$rootfs$m"
    mount --bind "$m" "$rootfs$m" && debian13_mounts+=("$rootfs$m") ||
      { echo "debian13: cannot bind $m into $rootfs" >&2; debian13_unmount; return 1; }
  done
  # The tests need /proc/self (TSan, stack traces, /dev/fd), /sys (hwloc): say so if they lack it.
  if ! chroot "$rootfs" /bin/sh -c 'test -e /proc/self/exe && test -d /sys/devices/system/cpu'; then
    echo "debian13: /proc or /sys not visible inside $rootfs" >&2; debian13_unmount; return 1
  fi
  # Name resolution for apt inside the root.
  cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf" 2>/dev/null || true
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "${vars[@]}" \
    chroot "$rootfs" "$@" || rc=$?
  debian13_unmount
  return $rc
}
