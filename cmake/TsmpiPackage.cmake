# Debian packages from the install components (scripts/package runs cpack in each variant's
# build): tsmpi-common (bin/tsmpirun and tsmpi-info that choose the variant, headers, pkg-config
# and CMake files, man pages, docs, modulefile), tsmpi-openmpi and tsmpi-mpich (the library and
# tools of one variant). The variants depend on tsmpi-common of the same version, on their MPI's
# mpiexec, and through dpkg-shlibdeps on the libraries they link (the MPI, TBB, libunwind).
set(CPACK_PACKAGE_NAME tsmpi)
set(CPACK_PACKAGE_VENDOR "tsmpi developers")
set(CPACK_PACKAGE_CONTACT "tsmpi developers <tsmpi@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "thread-safety layer for MPI programs, loaded with LD_PRELOAD")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <package>_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_COMPONENTS_ALL common ${TSMPI_MPI})

set(CPACK_COMPONENT_COMMON_DESCRIPTION
  "tsmpi, files common to its MPI variants\n tsmpirun and tsmpi-info (they run the variant for the MPI in use), tsmpi.h,\n pkg-config and CMake package files, manual pages, documentation, a modulefile.")
set(CPACK_DEBIAN_COMMON_PACKAGE_NAME tsmpi-common)
set(CPACK_DEBIAN_COMMON_PACKAGE_DEPENDS "bash")

string(TOUPPER ${TSMPI_MPI} _comp)
if(TSMPI_MPI STREQUAL "openmpi")
  set(_launcher openmpi-bin)
else()
  set(_launcher mpich)
endif()
set(CPACK_COMPONENT_${_comp}_DESCRIPTION
  "tsmpi for ${TSMPI_MPI_TITLE}\n libtsmpi.so, preloaded by tsmpirun into unmodified MPI programs, makes ${TSMPI_MPI_TITLE} safe\n for multithreaded programs; tsmpirun-${TSMPI_MPI} and tsmpi-info-${TSMPI_MPI}.")
set(CPACK_DEBIAN_${_comp}_PACKAGE_NAME tsmpi-${TSMPI_MPI})
set(CPACK_DEBIAN_${_comp}_PACKAGE_DEPENDS "tsmpi-common (= ${PROJECT_VERSION}), ${_launcher}")
include(CPack)
