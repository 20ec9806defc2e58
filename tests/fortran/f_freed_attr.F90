! f_freed_attr.F90: attribute calls on freed handles from Fortran. These routines reach no C
! function of the MPI (Open MPI and MPICH call internal attribute code), so tsmpi's generated
! entry points protect them (docs/fortran.md): a freed communicator or datatype gets
! MPI_ERR_COMM / MPI_ERR_TYPE through MPI_ERRORS_RETURN instead of a crash (Open MPI's binding
! would use the null pointer its f2c returns for the freed index). Live handles keep their values.
#include "binding.h"
program f_freed_attr
#if defined(TSMPI_MPIF_H)
  implicit none
  USE_BINDING
#else
  USE_BINDING
  implicit none
#endif
  T_COMM :: dup, stale_comm
  T_DATATYPE :: vec, stale_type
  integer :: ierr, rc, cls_comm, cls_type, comm_key, type_key, rank
  logical :: flag, ok
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, comm_key, extra, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, type_key, extra, ierr)
  ok = .true.

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN, ierr)
  val = 42
  call MPI_Comm_set_attr(dup, comm_key, val, ierr)
  val = 0
  call MPI_Comm_get_attr(dup, comm_key, val, flag, ierr)
  ok = ok .and. ierr == MPI_SUCCESS .and. flag .and. val == 42
  stale_comm = dup
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_get_attr(stale_comm, comm_key, val, flag, rc)
  call MPI_Error_class(rc, cls_comm, ierr)

  call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vec, ierr)
  val = 7
  call MPI_Type_set_attr(vec, type_key, val, ierr)
  val = 0
  call MPI_Type_get_attr(vec, type_key, val, flag, ierr)
  ok = ok .and. ierr == MPI_SUCCESS .and. flag .and. val == 7
  stale_type = vec
  call MPI_Type_free(vec, ierr)
  val = 8
  call MPI_Type_set_attr(stale_type, type_key, val, rc)
  call MPI_Error_class(rc, cls_type, ierr)

  ok = ok .and. cls_comm == MPI_ERR_COMM .and. cls_type == MPI_ERR_TYPE
  print '(a,i0,a,l1,a,l1)', 'f_freed_attr: rank ', rank, ': freed communicator MPI_ERR_COMM ', &
    cls_comm == MPI_ERR_COMM, ', freed datatype MPI_ERR_TYPE ', cls_type == MPI_ERR_TYPE
  if (ok) then
    print '(a,i0,a)', 'f_freed_attr: rank ', rank, ': ok'
  else
    print '(a,i0,a)', 'f_freed_attr: rank ', rank, ': FAILED'
  end if
  call MPI_Comm_free_keyval(comm_key, ierr)
  call MPI_Type_free_keyval(type_key, ierr)
  call MPI_Finalize(ierr)
end program f_freed_attr
