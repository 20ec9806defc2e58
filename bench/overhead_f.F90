! overhead_f: bench/overhead.c in Fortran (use mpi_f08): single-threaded ping-pong latency,
! what tsmpi costs a Fortran call (docs/fortran.md: the MPI's binding, then tsmpi's wrapper).
! usage: overhead_f single|multiple ITERATIONS SIZE...                             (np = 2)
! Rank 0 prints per SIZE the median of 5 blocks (after a warm-up block):
!   overhead_f size=S iterations=N latency_us=L provided=LEVEL
! Every byte of each block's last message is checked at both ends.
program overhead_f
  use mpi_f08
  use, intrinsic :: iso_fortran_env, only: int8
  implicit none
  integer, parameter :: blocks = 5
  integer :: provided, rank, np, a, b, k, bytes, maxsize, nargs
  integer(kind=8) :: base, n, i, errors, all_errors
  character(len=32) :: arg, mode
  integer(int8), allocatable :: buf(:)
  integer(int8) :: stamp
  double precision :: t0, t, block(blocks)
  integer, allocatable :: sizes(:)

  nargs = command_argument_count()
  mode = ''
  if (nargs >= 1) call get_command_argument(1, mode)
  if (trim(mode) == 'multiple') then
    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
  else
    call MPI_Init()
  end if
  call MPI_Query_thread(provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (nargs < 3 .or. np /= 2 .or. (trim(mode) /= 'multiple' .and. trim(mode) /= 'single')) then
    if (rank == 0) write(0, '(a)') 'usage: overhead_f single|multiple ITERATIONS SIZE... (np = 2)'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if
  call get_command_argument(2, arg)
  read(arg, *) base
  allocate(sizes(nargs - 2))
  do a = 3, nargs
    call get_command_argument(a, arg)
    read(arg, *) sizes(a - 2)
  end do
  maxsize = max(1, maxval(sizes))
  allocate(buf(maxsize))
  errors = 0
  do a = 1, nargs - 2
    bytes = sizes(a)
    n = base
    if (bytes > 1024) n = base * 1024 / bytes
    if (n < 50) n = 50
    do b = 0, blocks
      stamp = int(mod(b + 1 + bytes, 128), int8)
      call MPI_Barrier(MPI_COMM_WORLD)
      t0 = MPI_Wtime()
      do i = 1, n
        if (rank == 0) then
          if (i == n) buf(1:bytes) = stamp
          call MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD)
          call MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        else
          call MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
          call MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD)
        end if
      end do
      t = MPI_Wtime() - t0
      do k = 1, bytes
        if (buf(k) /= stamp) errors = errors + 1
      end do
      if (b > 0) block(b) = t / dble(n) / 2d0 * 1d6
    end do
    call sort(block)
    if (rank == 0) write(*, '(a,i0,a,i0,a,f0.4,a,i0)') 'overhead_f size=', bytes, ' iterations=', n, &
      ' latency_us=', block(blocks / 2 + 1), ' provided=', provided
    flush(6)
  end do
  call MPI_Reduce(errors, all_errors, 1, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0 .and. all_errors /= 0) then
    write(0, '(a,i0,a)') 'overhead_f: ', all_errors, ' bytes arrived wrong'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Finalize()
contains
  subroutine sort(x)
    double precision, intent(inout) :: x(:)
    integer :: p, q
    double precision :: v
    do p = 2, size(x)
      v = x(p)
      q = p - 1
      do while (q >= 1)
        if (x(q) <= v) exit
        x(q + 1) = x(q)
        q = q - 1
      end do
      x(q + 1) = v
    end do
  end subroutine sort
end program overhead_f
