# Fortran binding semantics: does a Fortran call mean the same under tsmpi? Included by
# tests/fortran/CMakeLists.txt in the scope of tests/CMakeLists.txt (_run, _progdir, _low_level,
# tsmpi_mpi_test). f_semantics.F90 (2 ranks, one thread) prints what the binding makes of
# sentinels, hidden string lengths, LOGICALs, callbacks registered from Fortran, statuses and
# attributes. Per binding it runs natively once (fortran.semantics.<binding>.native: every rank
# "ok", and its output the reference), then under tsmpirun in default mode, serialize mode
# (TSMPI_UNDERLYING_LEVEL=${_low_level}), checking mode (TSMPI_CHECK=warn) and with the lock2d
# probe policy; each must print exactly what the native run printed, and tsmpi nothing
# (tests/fortran/same_output.sh: one output file per rank, joined in rank order).
#
# Open MPI's mpif90 does not pass -fallow-argument-mismatch (MPICH's does), and without it
# gfortran >= 10 refuses one file's calls of an mpif.h routine with buffers of different types
# or ranks (MPI_Send of an array and of MPI_BOTTOM), which the mpif.h binding is made of.
set(_fsem_flags "")
if(TSMPI_MPI STREQUAL "openmpi")
  set(_fsem_flags -fallow-argument-mismatch)
endif()
tsmpi_fortran_program(f_semantics ${CMAKE_CURRENT_LIST_DIR}/f_semantics.F90 ${_fsem_flags})

set(_fsem_dir ${CMAKE_CURRENT_BINARY_DIR}/fortran_semantics)
set(_fsem_run ${CMAKE_CURRENT_LIST_DIR}/same_output.sh)
set(_fsem_modes default serialize check lock2d)
set(_fsem_env_default "")
set(_fsem_env_serialize TSMPI_UNDERLYING_LEVEL=${_low_level})
set(_fsem_env_check TSMPI_CHECK=warn)
set(_fsem_env_lock2d TSMPI_PROBE=lock2d)
foreach(_b IN LISTS TSMPI_FORTRAN_BINDINGS)
  set(_fsem_name f_semantics.${_b})
  tsmpi_mpi_test(fortran.semantics.${_b}.native TIMEOUT 120
    COMMAND ${_fsem_run} ${_fsem_dir} ${_fsem_name} native 2
      -- ${TSMPI_MPIEXEC} -np 2 ${_progdir}/${_fsem_name})
  set_tests_properties(${TSMPI_MPI}.fortran.semantics.${_b}.native PROPERTIES
    FIXTURES_SETUP fsem_native_${_b})
  foreach(_mode IN LISTS _fsem_modes)
    tsmpi_mpi_test(fortran.semantics.${_b}.${_mode} TIMEOUT 120 ENV ${_fsem_env_${_mode}}
      COMMAND ${_fsem_run} ${_fsem_dir} ${_fsem_name} ${_mode} 2
        -- ${_run} -np 2 ${_progdir}/${_fsem_name})
    set_tests_properties(${TSMPI_MPI}.fortran.semantics.${_b}.${_mode} PROPERTIES
      FIXTURES_REQUIRED fsem_native_${_b})
  endforeach()
endforeach()
