# Generates the wrappers from codegen/mpi_functions.table, the prototypes of the selected MPI's
# mpi.h (clang's JSON AST) and the PMPI symbols its library exports (nm -D).
find_program(TSMPI_CLANG NAMES clang clang-16 clang-15 clang-14 REQUIRED)
find_program(TSMPI_NM NAMES nm REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(TSMPI_GEN_DIR ${CMAKE_BINARY_DIR}/generated)
set(_chunks 8)
set(TSMPI_TABLE ${CMAKE_SOURCE_DIR}/codegen/mpi_functions.table CACHE FILEPATH "classification table")
set(TSMPI_GENERATOR ${CMAKE_SOURCE_DIR}/codegen/generate.py)
set(TSMPI_PMPI_EXPORTS ${TSMPI_GEN_DIR}/pmpi_exports.txt)
# An MPI that exports functions the table lacks (a newer MPI): stop, naming them (default), or
# warn: classify them by the table's written rules, wrap them conservatively, list them in
# tsmpi-info (codegen/README.md).
set(TSMPI_UNKNOWN_FUNCTIONS "stop" CACHE STRING "exported MPI functions without a table row: stop or warn")
set_property(CACHE TSMPI_UNKNOWN_FUNCTIONS PROPERTY STRINGS stop warn)
if(NOT TSMPI_UNKNOWN_FUNCTIONS MATCHES "^(stop|warn)$")
  message(FATAL_ERROR "TSMPI_UNKNOWN_FUNCTIONS=${TSMPI_UNKNOWN_FUNCTIONS}: allowed values are stop and warn")
endif()

set(_cflags "")
foreach(_d IN LISTS TSMPI_MPI_DEFINITIONS)
  list(APPEND _cflags --cflag=-D${_d})
endforeach()
foreach(_i IN LISTS TSMPI_MPI_INCLUDE_DIRS)
  list(APPEND _cflags --cflag=-I${_i})
endforeach()

set(TSMPI_WRAPPER_SOURCES "")
set(_outputs ${TSMPI_GEN_DIR}/fn_ids.h ${TSMPI_GEN_DIR}/function_table.cpp
    ${TSMPI_GEN_DIR}/fortran_redirects.cpp ${TSMPI_GEN_DIR}/fortran_entries.cpp ${TSMPI_GEN_DIR}/fortran_routines.cpp)
find_program(TSMPI_OBJDUMP NAMES objdump REQUIRED)
set(_fortran_args --fortran-only ${CMAKE_SOURCE_DIR}/codegen/fortran_only.table --objdump ${TSMPI_OBJDUMP})
foreach(_l IN LISTS TSMPI_FORTRAN_LIBRARIES)
  list(APPEND _fortran_args --fortran-library ${_l})
endforeach()
math(EXPR _last "${_chunks} - 1")
foreach(_c RANGE ${_last})
  list(APPEND TSMPI_WRAPPER_SOURCES ${TSMPI_GEN_DIR}/wrappers_${_c}.cpp)
  list(APPEND _outputs ${TSMPI_GEN_DIR}/wrappers_${_c}.cpp)
endforeach()

add_custom_command(OUTPUT ${_outputs} ${TSMPI_PMPI_EXPORTS}
  COMMAND ${Python3_EXECUTABLE} ${TSMPI_GENERATOR}
          --table ${TSMPI_TABLE} --mpi ${TSMPI_MPI} --outdir ${TSMPI_GEN_DIR} --chunks ${_chunks}
          --unknown-functions ${TSMPI_UNKNOWN_FUNCTIONS}
          --clang ${TSMPI_CLANG} --header ${CMAKE_SOURCE_DIR}/codegen/include_mpi.c ${_cflags}
          --ast ${TSMPI_GEN_DIR}/mpi_h_ast.json
          --nm ${TSMPI_NM} --library ${TSMPI_MPI_LIBRARY} --exports ${TSMPI_PMPI_EXPORTS}
          ${_fortran_args}
  DEPENDS ${TSMPI_GENERATOR} ${TSMPI_TABLE} ${TSMPI_MPI_H} ${TSMPI_MPI_LIBRARY} ${TSMPI_FORTRAN_LIBRARIES}
          ${CMAKE_SOURCE_DIR}/codegen/fortran.py ${CMAKE_SOURCE_DIR}/codegen/fortran_reach.py
          ${CMAKE_SOURCE_DIR}/codegen/fortran_only.table
          ${CMAKE_SOURCE_DIR}/codegen/include_mpi.c
  COMMENT "Generating tsmpi wrappers for ${TSMPI_MPI}" VERBATIM)
# One target owns the generation so that several targets using its outputs never run it twice.
add_custom_target(tsmpi_codegen DEPENDS ${_outputs})
