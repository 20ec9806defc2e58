// A blocking receive of a message a policy matched (MPI_Mprobe/MPI_Improbe), taken with
// MPI_Mrecv, and raising its errors where the application's MPI_Recv would.
//
// MPICH raises MPI_Mrecv's errors on MPI_COMM_WORLD's handler (it has no communicator argument),
// while its MPI_Recv raises them on the receive's communicator. The one error a matched message
// can bring is truncation, and the policy knows it before receiving: the probe's status gives
// the message's size. On MPICH such a message is received whole into a scratch buffer, what
// fits is unpacked into the application's buffer (the MPI's native packed form of a homogeneous
// message is its bytes), and MPI_ERR_TRUNCATE is raised on the communicator. Open MPI raises
// MPI_Mrecv's errors on the message's communicator already.
#pragma once
#include <mpi.h>

#include "matching/mpi_calls.h"

namespace tsmpi::matching {

int receive_matched(const Buffer& b, MPI_Message* message, const MPI_Status& probed, MPI_Comm comm,
                    MPI_Status* status);

// Whether receiving a message with this probe status into b truncates it where the MPI would
// raise that on another handler than the communicator's (always false on Open MPI).
bool truncation_misraised(const Buffer& b, const MPI_Status& probed);

}  // namespace tsmpi::matching
