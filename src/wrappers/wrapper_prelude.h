// Included by every generated wrappers_<n>.cpp.
#pragma once
#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI declares its MPIX_ extensions here
#endif

#include <type_traits>

#include "fn_ids.h"
#include "locking/object_names.h"
#include "matching/policy_only.h"
#include "ranks/buffered_sends.h"
#include "ranks/callbacks.h"
#include "ranks/native_calls.h"
#include "runtime/abort_job.h"
#include "runtime/activation.h"
#include "runtime/config.h"
#include "wrappers/handlers.h"
#include "wrappers/hook.h"
#include "wrappers/lifetime_read.h"
