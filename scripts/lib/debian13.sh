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
  # The root a mount point of its own, first: ip netns (scripts/test-hosts) remounts / inside.
  mountpoint -q "$rootfs" || { mount --bind "$rootfs" "$rootfs" && debian13_mounts+=("$rootfs"); }
  for m in /proc /sys /dev /dev/shm "$ROOT"; do
    mkdir -p "$rootfs$m"
    mountpoint -q "$rootfs$m" || { mount --bind "$m" "$rootfs$m" && debian13_mounts+=("$rootfs$m"); }
  done
  # Name resolution for apt inside the root.
  cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf" 2>/dev/null || true
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "${vars[@]}" \
    chroot "$rootfs" "$@" || rc=$?
  debian13_unmount
  return $rc
}
