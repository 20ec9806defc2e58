# Shared by scripts/*: package installation, builds, and the MPI launch environment.
# Source it; it sets ROOT to the checkout.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The scripts' own settings (TSMPI_DEBIAN13, TSMPI_DEBIAN13_ROOT, TSMPI_DEBIAN_MIRROR, ...) stay
# readable here but leave the environment, with every other TSMPI_ variable: tsmpi stops MPI_Init
# on a TSMPI_ variable it does not know, and an option set by the caller would change what every
# test checks. A script passes a setting on to another script explicitly.
for _v in ${!TSMPI_@}; do export -n "$_v"; done
unset _v

TSMPI_PACKAGES=(cmake g++ make clang python3 libopenmpi-dev openmpi-bin libmpich-dev mpich
  libtbb-dev libunwind-dev googletest libgtest-dev python3-matplotlib spin binutils gfortran
  environment-modules dpkg-dev pkg-config  # scripts/test-install, scripts/package
  libomp-dev iproute2  # clang's OpenMP (tests/mpi's OpenMP programs); ip netns (scripts/test-hosts)
  gdb)  # the stacks of a test that hangs (tests/stacks_on_timeout.sh)

# Installs the Debian packages that are missing (apt-get, as root).
install_missing_packages() {
  local missing=()
  for p in "${TSMPI_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "tsmpi: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "tsmpi: run as root (or install these Debian packages yourself): ${missing[*]}" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
}

# build_variant MPI BUILD_DIR [TARGET...]: configure and build tsmpi for one MPI (everything, or
# only the targets named).
build_variant() {
  local mpi=$1 dir=$2 targets=()
  shift 2
  for t in "$@"; do targets+=(--target "$t"); done
  mkdir -p "$dir"
  cmake -S "$ROOT" -B "$dir" -DTSMPI_MPI="$mpi" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$(nproc)" "${targets[@]}" >"$dir.build.log" 2>&1 ||
    { tail -50 "$dir.build.log"; return 1; }
}

# Open MPI on a 2-core machine, possibly as root.
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe OMPI_MCA_btl_tcp_disable_family=6 PMIX_MCA_gds=hash OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
