# cmake --install: one variant per build (TSMPI_MPI), laid out so that the Open MPI and MPICH
# variants install side by side into one prefix (docs/install.md):
#   component <mpi>   <libdir>/tsmpi/<mpi>/libtsmpi.so, libtsmpi_sync.so, bin/tsmpirun-<mpi>,
#                     bin/tsmpi-info-<mpi>, <libdir>/pkgconfig/tsmpi-<mpi>.pc,
#                     <libdir>/cmake/tsmpi/tsmpi-<mpi>-targets.cmake
#   component common  bin/tsmpirun and bin/tsmpi-info (choose the variant), include/tsmpi.h,
#                     tsmpif.h, tsmpif08.h, tsmpi.pc, tsmpiConfig*.cmake, man pages, docs, the modulefile
# Both builds write identical common files, so installing the second variant over the first
# changes nothing of the first's. Everything installed finds its siblings by relative paths: the
# prefix can be moved, and nothing points into the build tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TSMPI_INSTALL_VARIANT_LIBDIR ${CMAKE_INSTALL_LIBDIR}/tsmpi/${TSMPI_MPI})
set(TSMPI_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tsmpi)
if(TSMPI_MPI STREQUAL "openmpi")
  set(TSMPI_MPI_TITLE "Open MPI")
  set(TSMPI_PC_MPI ompi-c)
else()
  set(TSMPI_MPI_TITLE "MPICH")
  set(TSMPI_PC_MPI mpich)
endif()

# The variant bin/tsmpirun and bin/tsmpi-info choose when the MPI in PATH does not tell: the
# MPI of the machine's default mpicc, the same in both builds.
if(NOT DEFINED TSMPI_DEFAULT_MPI)
  set(_default ${TSMPI_MPI})
  find_program(_tsmpi_mpicc mpicc NO_CACHE)
  if(_tsmpi_mpicc)
    get_filename_component(_real ${_tsmpi_mpicc} REALPATH)
    if(_real MATCHES "openmpi|opal")
      set(_default openmpi)
    elseif(_real MATCHES "mpich")
      set(_default mpich)
    endif()
  endif()
  set(TSMPI_DEFAULT_MPI ${_default} CACHE STRING "variant tsmpirun runs when the MPI in PATH does not tell")
endif()
if(NOT TSMPI_DEFAULT_MPI MATCHES "^(openmpi|mpich)$")
  message(FATAL_ERROR "TSMPI_DEFAULT_MPI=${TSMPI_DEFAULT_MPI}: allowed values are openmpi and mpich")
endif()

# Relative paths from where a file is installed to the prefix (any prefix: only depths count).
file(RELATIVE_PATH TSMPI_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
file(RELATIVE_PATH TSMPI_CMAKE_TO_PREFIX /p/${TSMPI_INSTALL_CMAKEDIR} /p)
file(RELATIVE_PATH TSMPI_RUN_LIBDIR /p/${CMAKE_INSTALL_BINDIR} /p/${TSMPI_INSTALL_VARIANT_LIBDIR})
string(REGEX REPLACE "/$" "" TSMPI_PC_TO_PREFIX "${TSMPI_PC_TO_PREFIX}")
string(REGEX REPLACE "/$" "" TSMPI_CMAKE_TO_PREFIX "${TSMPI_CMAKE_TO_PREFIX}")

set(_inst ${CMAKE_BINARY_DIR}/install)  # files configured for the installed layout
set(_exe_perms OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# --- the variant ---------------------------------------------------------------------------
# Installed libraries keep the run paths to libraries outside the build tree (the MPI's own
# directory for libmpi) and lose the build tree's; libtsmpi_sync finds libtsmpi beside it.
set_target_properties(tsmpi PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(tsmpi_sync PROPERTIES INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tsmpi tsmpi_sync LIBRARY DESTINATION ${TSMPI_INSTALL_VARIANT_LIBDIR} COMPONENT ${TSMPI_MPI})
set(TSMPI_RUN_INFO tsmpi-info-${TSMPI_MPI})
configure_file(${CMAKE_SOURCE_DIR}/tools/tsmpirun.in ${_inst}/tsmpirun-${TSMPI_MPI} @ONLY)
install(PROGRAMS ${_inst}/tsmpirun-${TSMPI_MPI} DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${TSMPI_MPI})
# tsmpi-info's only run path is the MPI's library directory (tsmpi_core is linked in).
install(PROGRAMS $<TARGET_FILE:tsmpi-info> DESTINATION ${CMAKE_INSTALL_BINDIR}
  RENAME tsmpi-info-${TSMPI_MPI} COMPONENT ${TSMPI_MPI})
configure_file(${CMAKE_SOURCE_DIR}/packaging/pkgconfig/tsmpi-variant.pc.in ${_inst}/tsmpi-${TSMPI_MPI}.pc @ONLY)
install(FILES ${_inst}/tsmpi-${TSMPI_MPI}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT ${TSMPI_MPI})
configure_file(${CMAKE_SOURCE_DIR}/packaging/cmake/tsmpi-variant-targets.cmake.in
  ${_inst}/tsmpi-${TSMPI_MPI}-targets.cmake @ONLY)
install(FILES ${_inst}/tsmpi-${TSMPI_MPI}-targets.cmake DESTINATION ${TSMPI_INSTALL_CMAKEDIR} COMPONENT ${TSMPI_MPI})

# --- common to both variants ---------------------------------------------------------------
foreach(_tool tsmpirun tsmpi-info)
  set(TSMPI_TOOL ${_tool})
  configure_file(${CMAKE_SOURCE_DIR}/tools/tsmpi-dispatch.in ${_inst}/${_tool} @ONLY)
  install(PROGRAMS ${_inst}/${_tool} DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT common)
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/include/tsmpi.h ${CMAKE_SOURCE_DIR}/include/tsmpif.h
  ${CMAKE_SOURCE_DIR}/include/tsmpif08.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT common)
configure_file(${CMAKE_SOURCE_DIR}/packaging/pkgconfig/tsmpi.pc.in ${_inst}/tsmpi.pc @ONLY)
install(FILES ${_inst}/tsmpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT common)
configure_package_config_file(${CMAKE_SOURCE_DIR}/packaging/cmake/tsmpiConfig.cmake.in
  ${_inst}/tsmpiConfig.cmake INSTALL_DESTINATION ${TSMPI_INSTALL_CMAKEDIR})
write_basic_package_version_file(${_inst}/tsmpiConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${_inst}/tsmpiConfig.cmake ${_inst}/tsmpiConfigVersion.cmake
  DESTINATION ${TSMPI_INSTALL_CMAKEDIR} COMPONENT common)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/man/ DESTINATION ${CMAKE_INSTALL_MANDIR} COMPONENT common
  FILES_MATCHING PATTERN "*.[1-9]")
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT common)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT common
  PATTERN man EXCLUDE)
# The modulefile names the prefix the files land in, known only when installing
# (cmake --install --prefix P; DESTDIR staging for packages is not part of it).
install(CODE "
  set(PROJECT_VERSION ${PROJECT_VERSION})
  set(CMAKE_INSTALL_BINDIR ${CMAKE_INSTALL_BINDIR})
  set(CMAKE_INSTALL_MANDIR ${CMAKE_INSTALL_MANDIR})
  set(CMAKE_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
  set(TSMPI_MODULE_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/packaging/modulefiles/tsmpi.in\" \"${_inst}/modulefile\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/modulefiles/tsmpi\"
       TYPE FILE RENAME ${PROJECT_VERSION} FILES \"${_inst}/modulefile\")
" COMPONENT common)
