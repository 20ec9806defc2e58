/* Promela model of serialize mode's nonblocking communicator constructors
   (src/locking/creation_in_flight.cpp, collective_sequence.cpp): MPI_Comm_idup returns at once;
   the MPI is given it once every member has called it (presence: an agreement on the parent),
   every member holds its process's right to create (the admission protocol's vote, advanced by
   progress steps: one communicator creation per process in the MPI at a time, lowest id first),
   and collectives called on the parent after it wait until it completed (the parent's
   sequence). Checked with spin for deadlock (invalid end states), assertion violations (two
   processes matching different operations on one communicator) and, under weak fairness,
   non-progress cycles (votes failing for ever).

   The MPI is modelled on Open MPI 4.1's context-id agreement: a constructor given to the MPI
   runs two rounds, each a collective on its parent that the process starts from its progress
   engine once the previous round completed there (so a round takes its place in the parent's
   order when it starts, not when the program called MPI_Comm_idup); and a constructor may
   start its first round only while no constructor with a lower id is in its rounds at that
   process (the lowest id goes first; any completion clears it).

   Two processes, communicators A (id 1) and B (id 2) spanning both, four threads (the shape of
   MPICH's threads/comm/idup_deadlock and idup_nb tests, tests/mpi/idup_*.c):
     P0: y0 = idup(B), wait, set a flag        x0 = wait for the flag, idup(A), Iallreduce(A), wait
     P1: y1 = idup(B), wait                    x1 = idup(A), Iallreduce(A), wait
   (a correct MPI program). Each constructor's steps at a process, and the Iallreduce's start,
   are a process of their own here: tsmpi's progress pass visits every sequence.
   Without -DPRESENCE the vote starts when the program calls MPI_Comm_idup: on P1 A's claim
   wins against B's and its vote fails for ever, as P0 calls idup(A) only after B completed
   (spin must find that non-progress cycle). With -DMUTANT_NO_SEQUENCE the Iallreduce goes to
   the MPI when the program calls it: it can start between A's presence and its rounds on one
   process and after them on the other, and the processes match different operations (spin
   must find the assertion violation). */

#define NP 2      /* processes */
#define NONE 255

#define A 0
#define B 1
/* operations on a communicator, in the order the program calls them */
#define PRES 1    /* the constructor's presence agreement */
#define R1 2      /* the MPI's first round */
#define R2 3      /* the MPI's second round */
#define COLL 4    /* the program's Iallreduce (on A only) */
#define NOPS 5

byte id[2];                  /* the parent's id: tsmpi's and the MPI's priority alike */

/* The MPI's matching order per communicator: the k-th collective each process starts on X
   must be the same operation everywhere. */
byte nlog[2];
byte oplog[2 * 6];
byte nstarted[2 * NP];       /* X*NP+p: how many collectives p started on X */
byte members_started[2 * NOPS];  /* X*NOPS+op: processes that started op on X */
#define DONE(X, op) (members_started[(X) * NOPS + (op)] == NP)

inline start(X, p, op) {
  if
  :: nstarted[(X) * NP + (p)] < nlog[X] -> assert(oplog[(X) * 6 + nstarted[(X) * NP + (p)]] == op)
  :: else -> oplog[(X) * 6 + nlog[X]] = op; nlog[X]++
  fi;
  nstarted[(X) * NP + (p)]++;
  members_started[(X) * NOPS + (op)]++
}

/* The constructor on X at process p: 0 not called, 1 called, 2 given to the MPI, 3 first round
   started, 4 second round started, 5 completed. */
byte cstate[2 * NP];
#define C(X, p) cstate[(X) * NP + (p)]
byte lowest[NP];             /* the MPI's lowest id in its rounds at p */

/* The admission protocol at p (locking/admission.cpp): who holds the right to create, and
   the lowest id of a call that waits for it. */
byte right[NP];
byte tlowest[NP];
/* The vote on X: one agreement round at a time (calls on X are ordered), AND of the claims. */
byte vposted[2];
bool vacc[2];
bool vresult[2];
byte vgen[2];

byte coll[NP];               /* the Iallreduce on A at p: 0 not called, 1 waiting, 2 started */
bool flag_b0 = false;        /* P0's y0 finished its duplication of B */
byte finished = 0;

/* MPI_Comm_idup(X) at p: returns at once; presence started (the parent is idle). */
inline call_idup(X, p) {
  atomic {
#ifdef PRESENCE
    start(X, p, PRES);
#endif
    C(X, p) = 1
  }
}

/* MPI_Iallreduce(A) at p: started at once, or after A's pending constructor. */
inline call_coll(p) {
  atomic {
#ifdef MUTANT_NO_SEQUENCE
    start(A, p, COLL); coll[p] = 2
#else
    if
    :: C(A, p) == 5 -> start(A, p, COLL); coll[p] = 2
    :: else -> coll[p] = 1
    fi
#endif
  }
}

/* The steps of constructor X at process p, taken by whichever thread holds p's lock. */
proctype constructor(byte X; byte p) {
  bool mine;
  byte gen;
  C(X, p) == 1;
#ifdef PRESENCE
  DONE(X, PRES);  /* every member has called it */
#endif
  do
  :: atomic {  /* claim the right (free, and no lower id waits), post the claim */
       if
       :: id[X] < tlowest[p] -> tlowest[p] = id[X]
       :: else -> skip
       fi;
       mine = (right[p] == NONE && id[X] <= tlowest[p]);
       if
       :: mine -> right[p] = X
       :: else -> skip
       fi;
       gen = vgen[X];
       vacc[X] = (vposted[X] == 0 -> mine : (vacc[X] && mine));
       vposted[X]++;
       if
       :: vposted[X] == NP -> vresult[X] = vacc[X]; vposted[X] = 0; vgen[X]++
       :: else -> skip
       fi
     }
     atomic {  /* the result: every member claimed, or give the claim back and vote again */
       vgen[X] != gen ->
       if
       :: vresult[X] -> break
       :: else ->
          if
          :: mine -> right[p] = NONE
          :: else -> skip
          fi
       fi
     }
  od;
progress_admitted:
  C(X, p) = 2;
  atomic {  /* the MPI starts the first round: the lowest id in rounds goes first */
    lowest[p] == NONE || lowest[p] >= id[X] -> lowest[p] = id[X]; start(X, p, R1); C(X, p) = 3
  }
  atomic { DONE(X, R1) -> start(X, p, R2); C(X, p) = 4 }
  atomic {
    DONE(X, R2) -> C(X, p) = 5; lowest[p] = NONE;
    right[p] = NONE;  /* leave: the right, and its place as lowest */
    if
    :: tlowest[p] == id[X] -> tlowest[p] = NONE
    :: else -> skip
    fi
  }
}

#ifndef MUTANT_NO_SEQUENCE
/* The Iallreduce that waited behind A's constructor at p (or started at once). */
proctype collective(byte p) {
  atomic {
    if
    :: coll[p] == 1 && C(A, p) == 5 -> start(A, p, COLL); coll[p] = 2
    :: coll[p] == 2 -> skip
    fi
  }
}
#endif

proctype duplicate_then_collective(byte p) {
  if
  :: p == 0 -> flag_b0  /* P0's x0 waits for y0's duplication first */
  :: else -> skip
  fi;
  call_idup(A, p);
  call_coll(p);
  C(A, p) == 5 && coll[p] == 2 && DONE(A, COLL);
  finished++
}

proctype duplicate(byte p) {
  call_idup(B, p);
  C(B, p) == 5;
  if
  :: p == 0 -> flag_b0 = true
  :: else -> skip
  fi;
  finished++
}

init {
  atomic {
    id[A] = 1; id[B] = 2;
    lowest[0] = NONE; lowest[1] = NONE;
    right[0] = NONE; right[1] = NONE; tlowest[0] = NONE; tlowest[1] = NONE;
    run constructor(A, 0); run constructor(B, 0); run constructor(A, 1); run constructor(B, 1);
#ifndef MUTANT_NO_SEQUENCE
    run collective(0); run collective(1);
#endif
    run duplicate(0); run duplicate_then_collective(0);
    run duplicate(1); run duplicate_then_collective(1)
  }
  finished == 4
}
