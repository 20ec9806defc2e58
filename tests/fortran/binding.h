! binding.h: one test source, three MPI Fortran bindings. Each program is compiled three times
! (tests/fortran/CMakeLists.txt) with -DTSMPI_MPIF_H, -DTSMPI_USE_MPI or -DTSMPI_F08 and
! includes this file with #include "binding.h" (cpp, before any declaration).
!   USE_BINDING       the binding's `use`/`include` line (put it where a use statement goes)
!   T_COMM T_DATATYPE T_REQUEST T_INFO T_OP T_ERRHANDLER T_MESSAGE T_GROUP  handle declarations
!   T_STATUS(s)       a status variable s; ST_SOURCE(s) ST_TAG(s) ST_ERROR(s) its fields
!   T_STATUSES(s,n)   an array of n statuses; STS_SOURCE(s,i) STS_TAG(s,i) the i-th's fields
!   HANDLE_EQ(a,b)    handle comparison; BINDING_NAME the binding as a string
!   T_WIN T_FILE      window and file handle declarations
!   STS_ERROR(s,i)    the i-th status's MPI_ERROR field
!   STS_ITEM(s,i)     the i-th status of an array, as a status argument
#if defined(TSMPI_F08)
#define T_WIN type(MPI_Win)
#define T_FILE type(MPI_File)
#define STS_ERROR(s,i) s(i)%MPI_ERROR
#define STS_ITEM(s,i) s(i)
#else
#define T_WIN integer
#define T_FILE integer
#define STS_ERROR(s,i) s(MPI_ERROR, i)
#define STS_ITEM(s,i) s(:, i)
#endif
#if defined(TSMPI_F08)
#define USE_BINDING use mpi_f08
#define T_COMM type(MPI_Comm)
#define T_DATATYPE type(MPI_Datatype)
#define T_REQUEST type(MPI_Request)
#define T_INFO type(MPI_Info)
#define T_OP type(MPI_Op)
#define T_ERRHANDLER type(MPI_Errhandler)
#define T_MESSAGE type(MPI_Message)
#define T_GROUP type(MPI_Group)
#define T_STATUS(s) type(MPI_Status) :: s
#define T_STATUSES(s,n) type(MPI_Status) :: s(n)
#define ST_SOURCE(s) s%MPI_SOURCE
#define ST_TAG(s) s%MPI_TAG
#define ST_ERROR(s) s%MPI_ERROR
#define STS_SOURCE(s,i) s(i)%MPI_SOURCE
#define STS_TAG(s,i) s(i)%MPI_TAG
#define HANDLE_EQ(a,b) (a == b)
#define BINDING_NAME "mpi_f08"
#else
#if defined(TSMPI_USE_MPI)
#define USE_BINDING use mpi
#define BINDING_NAME "use mpi"
#else
#define USE_BINDING include 'mpif.h'
#define BINDING_NAME "mpif.h"
#endif
#define T_COMM integer
#define T_DATATYPE integer
#define T_REQUEST integer
#define T_INFO integer
#define T_OP integer
#define T_ERRHANDLER integer
#define T_MESSAGE integer
#define T_GROUP integer
#define T_STATUS(s) integer :: s(MPI_STATUS_SIZE)
#define T_STATUSES(s,n) integer :: s(MPI_STATUS_SIZE, n)
#define ST_SOURCE(s) s(MPI_SOURCE)
#define ST_TAG(s) s(MPI_TAG)
#define ST_ERROR(s) s(MPI_ERROR)
#define STS_SOURCE(s,i) s(MPI_SOURCE, i)
#define STS_TAG(s,i) s(MPI_TAG, i)
#define HANDLE_EQ(a,b) (a == b)
#endif
