# Spack recipe for tsmpi (docs/install.md#spack). Use it from a repository of your own:
#   spack repo add <checkout>/packaging/spack      (namespace "tsmpi", see ../../repo.yaml)
#   spack install tsmpi ^openmpi                   or   spack install tsmpi ^mpich
# One installation per MPI, as Spack installs everything that depends on MPI; the installed
# bin/tsmpirun runs the variant of that installation.
from spack.package import *


class Tsmpi(CMakePackage):
    """Thread-safety layer for MPI programs: an LD_PRELOAD interposition library that makes
    Open MPI and MPICH safe for multithreaded programs (probe/receive atomicity, serialized
    calls below MPI_THREAD_MULTIPLE, object lifetime, checking mode, hang watchdog,
    threads as MPI ranks)."""

    # tsmpi has no public release to fetch: build from a checkout with
    #   spack dev-build -d <checkout> tsmpi@0.1.0 ^openmpi
    # (or `spack develop`); a site that mirrors the repository adds `git = "<its URL>"` here.
    version("0.1.0")

    variant("tests", default=False, description="Build the unit and MPI tests (needs GoogleTest)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build")  # the build reads the MPI's Fortran libraries
    depends_on("cmake@3.20:", type="build")
    depends_on("python@3.8:", type="build")  # codegen/generate.py
    depends_on("llvm+clang", type="build")  # parses the MPI's mpi.h for the wrappers' prototypes
    depends_on("binutils", type="build")  # nm and objdump read the MPI's exported symbols
    depends_on("mpi")
    depends_on("tbb")
    depends_on("libunwind")
    depends_on("googletest", type="build", when="+tests")

    # The wrappers are generated for, and tested on, these two MPIs only.
    requires("^openmpi", "^mpich", policy="one_of", msg="tsmpi supports Open MPI and MPICH")

    def cmake_args(self):
        mpi = "openmpi" if self.spec.satisfies("^openmpi") else "mpich"
        mpi_spec = self.spec["mpi"]
        return [
            self.define("TSMPI_MPI", mpi),
            # Spack's MPI has plain mpicc/mpiexec/mpif90 (Debian's are mpicc.openmpi, ...).
            self.define("TSMPI_MPICC", mpi_spec.mpicc),
            self.define("TSMPI_MPIF90", mpi_spec.mpifc),
            self.define("TSMPI_MPIEXEC", join_path(mpi_spec.prefix.bin, "mpiexec")),
            self.define("TSMPI_DEFAULT_MPI", mpi),
            self.define("BUILD_TESTING", self.spec.satisfies("+tests")),
        ]
