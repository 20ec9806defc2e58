# The threaded protections from Fortran: each program once per binding (mpif.h, use mpi,
# use mpi_f08), under tsmpirun, mirroring the C tests of tests/CMakeLists.txt. Included by
# tests/fortran/CMakeLists.txt, in the scope of tests/CMakeLists.txt (_run, _expect, _progdir,
# _low_level, tsmpi_mpi_test). Test names: fortran.<what>.<binding>[.<variant>].
foreach(_p f_probe_race f_serialize f_idup f_request_table f_info_race f_freed_handle f_check_report)
  tsmpi_fortran_program(${_p} ${CMAKE_CURRENT_LIST_DIR}/${_p}.F90)
endforeach()

# f_serialize's rounds: MPICH at MULTIPLE, its threads spinning for its lock on 2 cores, needs
# 5-10 s for 100 rounds natively (30 s next to another such test); Open MPI 1 s for 200.
if(TSMPI_MPI STREQUAL "mpich")
  set(_fser_rounds 100)
else()
  set(_fser_rounds 200)
endif()
math(EXPR _fser_commio "3 * ${_fser_rounds}")

set(_f_policies mprobe lock2d helper)  # serialize mode's policy per binding, in binding order
foreach(_b IN LISTS TSMPI_FORTRAN_BINDINGS)

  # ---- Probe policies: probe -> allocate -> receive by 4 threads (probe.*.storm) ----
  # Rank 0's 4 threads receive 2 x 2000 messages (and 32 end markers): zero false matches, each
  # message once and intact, non-overtaking per thread; each policy over an MPI at MULTIPLE and
  # in serialize mode. The statistics line shows that every probe went through the policy
  # (4032 messages reserved and taken). Natively with 4 threads the program false-matches
  # (MPICH) or corrupts the heap (Open MPI, as examples/hybrid_probe_recv.c does), but no run
  # is sure to fail, and expect.sh cannot accept "pass or fail": there is no native 4-thread
  # run. With one receiving thread the program is correct natively, which checks the program
  # itself. Each binding with each policy at MULTIPLE; in serialize mode each policy once, on
  # one binding each (a binding's path to the C layer does not depend on the policy or the
  # level, nor a policy's on the binding).
  list(FIND TSMPI_FORTRAN_BINDINGS ${_b} _b_index)
  list(GET _f_policies ${_b_index} _serialized_policy)
  foreach(_level multiple ${_low_level})
    set(_policies mprobe lock2d helper)
    if(NOT _level STREQUAL "multiple")
      set(_policies ${_serialized_policy})
    endif()
    foreach(_policy IN LISTS _policies)
      tsmpi_mpi_test(fortran.probe_race.${_b}.${_policy}.${_level} TIMEOUT 120
        ENV TSMPI_PROBE=${_policy} TSMPI_UNDERLYING_LEVEL=${_level} TSMPI_STATS=1
        COMMAND ${_expect} --has "^f_probe_race: rank 0: received 4000 messages, false matches 0$"
          --count 3 "^f_probe_race: rank [0-2]: ok$"
          --has "  probe: policy=${_policy} reserved=4032 reprobes=[0-9]+ taken=4032 unreceived=0"
          -- ${_run} -np 3 ${_progdir}/f_probe_race.${_b} 4 2000)
    endforeach()
  endforeach()
  tsmpi_mpi_test(fortran.probe_race.${_b}.native_one_thread TIMEOUT 120
    COMMAND ${_expect} --has "^f_probe_race: rank 0: received 4000 messages, false matches 0$"
      --count 3 "^f_probe_race: rank [0-2]: ok$"
      -- ${TSMPI_MPIEXEC} -np 3 ${_progdir}/f_probe_race.${_b} 1 2000)

  # ---- Serialize mode: the MPI at ${_low_level}, MPI_THREAD_MULTIPLE for the program ----
  # 3 ranks x 3 threads, each on its own duplicate: rounds of Allreduce, Bcast, Barrier and
  # Sendrecv, Comm_dup + Comm_split + Comm_free every 20th, every result checked; twice in a
  # row. The statistics show serialize mode at work (admissions) and that each thread's
  # MPI_Sendrecv reached tsmpi once (3 x rounds CommIO calls per rank). Natively at MULTIPLE
  # once, 20 rounds (one communicator cycle), which checks the program itself.
  tsmpi_mpi_test(fortran.serialize.${_b} ENV TSMPI_UNDERLYING_LEVEL=${_low_level} TSMPI_STATS=1 TIMEOUT 180
    COMMAND ${_expect} --repeat 2 --count 3 "^f_serialize: rank [0-2]: ok$"
      --count 3 "options: TSMPI_UNDERLYING_LEVEL=${_low_level} "
      --count 3 "serialize: admissions=[1-9][0-9]* retries=[0-9]+ deferred=0$"
      --count 3 "calls: .* CommIO=${_fser_commio} "
      -- ${_run} -np 3 ${_progdir}/f_serialize.${_b} 3 ${_fser_rounds})
  tsmpi_mpi_test(fortran.serialize.${_b}.native TIMEOUT 180
    COMMAND ${_expect} --count 3 "^f_serialize: rank [0-2]: ok$"
      -- ${TSMPI_MPIEXEC} -np 3 ${_progdir}/f_serialize.${_b} 3 20)

  # Nonblocking duplications from 4 OpenMP threads per rank, each with an MPI_Iallreduce and an
  # MPI_Ibarrier on the communicator while they are pending, 3 rounds, 3 times in a row: serialize
  # mode gives the MPI each duplication after the call returned and writes newcomm then, through
  # Open MPI's bindings (which hand the C call a copy of newcomm) into the program's variable.
  # Every new communicator and result is checked. (Natively Open MPI 4.1.4 hangs in it.)
  tsmpi_mpi_test(fortran.serialize_idup.${_b} ENV TSMPI_UNDERLYING_LEVEL=${_low_level} TSMPI_STATS=1
    TSMPI_HANG_TIMEOUT=30 TIMEOUT 400
    COMMAND ${_expect} --repeat 3 --count 3 "^f_idup: rank [0-2]: ok$"
      --count 3 "serialize: admissions=[1-9][0-9]* retries=[0-9]+ deferred=[1-9][0-9]*$" --lacks "tsmpi: .*hang:"
      -- timeout -k 5 120 ${_run} -np 3 ${_progdir}/f_idup.${_b} 4 3)

  # 8 OpenMP threads per rank post 256 receives each, 300 rounds, twice: no two pending
  # requests share an INTEGER (Open MPI's bindings make it with MPI_Request_c2f outside the C
  # call, and its table locks only at MULTIPLE: serialize mode locks the conversions), every
  # message arrives. Natively at MULTIPLE once, which checks the program (not on Open MPI,
  # which fails it natively now and then: cmake/TsmpiMpi.cmake).
  tsmpi_mpi_test(fortran.serialize_request_table.${_b} ENV TSMPI_UNDERLYING_LEVEL=${_low_level} TIMEOUT 180
    COMMAND ${_expect} --repeat 2 --count 2 "^f_request_table: rank [01]: ok$"
      -- timeout -k 5 80 ${_run} -np 2 ${_progdir}/f_request_table.${_b})
  if(TSMPI_MPI_HANDLE_CONVERSIONS_THREAD_SAFE)
    tsmpi_mpi_test(fortran.serialize_request_table.${_b}.native TIMEOUT 120
      COMMAND ${_expect} --count 2 "^f_request_table: rank [01]: ok$"
        -- timeout -k 5 80 ${TSMPI_MPIEXEC} -np 2 ${_progdir}/f_request_table.${_b})
  endif()

  # ---- Object lifetime (lifetime.*.info_race, lifetime.*.freed_handles) ----
  # Set, get and free of one MPI_Info by three threads, 300 rounds, at MULTIPLE and in serialize
  # mode: no crash, no call succeeds after the free returned or after a failure, failures are
  # MPI_ERR_INFO, readers see whole values. (Natively MPICH segfaults; Open MPI's Fortran
  # handles are table indices, looked up per call, and the program passes there.) Once per
  # binding and MPI: the C program (lifetime.*.info_race) runs the race three times in a row.
  foreach(_level multiple ${_low_level})
    tsmpi_mpi_test(fortran.info_race.${_b}.${_level} ENV TSMPI_UNDERLYING_LEVEL=${_level} TIMEOUT 120
      COMMAND ${_expect} --count 2 "^f_info_race: rank [01]: ok$"
        -- ${_run} -np 2 ${_progdir}/f_info_race.${_b})
  endforeach()
  # A freed communicator, datatype and info: the class of its kind, silently by default.
  tsmpi_mpi_test(fortran.freed_handle.${_b} TIMEOUT 60
    COMMAND ${_expect} --count 2 "^f_freed_handle: rank [01]: ok$" --lacks "^tsmpi"
      --count 2 "MPI_Comm_rank -> class [0-9]+ .MPI_ERR_COMM"
      -- ${_run} -np 2 ${_progdir}/f_freed_handle.${_b})
  # Under checking mode communication calls are checked too (MPI_Send on the freed
  # communicator), and each use is reported with the Fortran caller in its backtrace.
  tsmpi_mpi_test(fortran.freed_handle.${_b}.check_send ENV TSMPI_CHECK=warn TIMEOUT 60
    COMMAND ${_expect} --count 2 "^f_freed_handle: rank [01]: ok$"
      --count 2 "ERROR: use after free: MPI_Comm_rank on communicator .*freed before by MPI_Comm_free$"
      --count 2 "ERROR: use after free: MPI_Comm_dup on communicator .*freed before by MPI_Comm_free$"
      --count 2 "ERROR: use after free: MPI_Send on communicator .*freed before by MPI_Comm_free$"
      --count 2 "ERROR: use after free: MPI_Type_size on datatype .*freed before by MPI_Type_free$"
      --count 2 "ERROR: use after free: MPI_Info_get_nkeys on info .*freed before by MPI_Info_free$"
      --count 2 "ERROR: use after free: MPI_Info_set on info .*freed before by MPI_Info_free$"
      --has "#[0-9]+ 0x[0-9a-f]+ MAIN__\\+0x[0-9a-f]+ \\(f_freed_handle\\.${_b}\\)$"
      -- ${_run} -np 2 ${_progdir}/f_freed_handle.${_b} send)
  # Natively Open MPI 4.1 returns the same classes (its Fortran handles index a table whose
  # freed entries are refused); MPICH 4.0 returns success on the freed datatype and info and
  # then segfaults: no native run there.
  if(TSMPI_MPI STREQUAL "openmpi")
    tsmpi_mpi_test(fortran.freed_handle.${_b}.native TIMEOUT 60
      COMMAND ${_expect} --count 2 "^f_freed_handle: rank [01]: ok$"
        -- ${TSMPI_MPIEXEC} -np 2 ${_progdir}/f_freed_handle.${_b} send)
  endif()

  # ---- Checking mode: two threads in MPI_Barrier on one communicator (check.collectives_*) ----
  # The report, and the backtraces of both threads through the Fortran parallel region that
  # made the calls. The twin (two communicators) must be silent, under tsmpi and natively.
  tsmpi_mpi_test(fortran.check_collectives.${_b} ENV TSMPI_CHECK=warn TIMEOUT 60
    COMMAND ${_expect} --count 2 "^f_check_report: rank [01]: ok$"
      --count 1 "^tsmpi: rank 0/2: ERROR: no ordering between thread [0-9]+'s MPI_Barrier and thread [0-9]+'s MPI_Barrier on communicator 0x[0-9a-f]+: "
      --has "thread [0-9]+ .tid [0-9]+. earlier, in MPI_Barrier$" --has "backtrace of thread"
      --count 2 "#[0-9]+ 0x[0-9a-f]+ collective_threads_\\._omp_fn\\.[0-9]+\\+0x[0-9a-f]+ \\(f_check_report\\.${_b}\\)$"
      -- ${_run} -np 2 ${_progdir}/f_check_report.${_b})
  tsmpi_mpi_test(fortran.check_collectives_twin.${_b} ENV TSMPI_CHECK=warn TIMEOUT 60
    COMMAND ${_expect} --count 2 "^f_check_report: rank [01]: ok$" --lacks "tsmpi"
      -- ${_run} -np 2 ${_progdir}/f_check_report.${_b} twin)
  tsmpi_mpi_test(fortran.check_collectives_twin.${_b}.native TIMEOUT 60
    COMMAND ${_expect} --count 2 "^f_check_report: rank [01]: ok$"
      -- ${TSMPI_MPIEXEC} -np 2 ${_progdir}/f_check_report.${_b} twin)
endforeach()
