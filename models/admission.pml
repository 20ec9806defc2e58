/* Promela model of tsmpi's admission protocol for blocking collectives in serialize mode
   (src/locking/admission.cpp): the context-id algorithm of Gropp & Thakur (seed 000 §5.3)
   with a presence round first. Checked with spin for deadlock (invalid end states) and, with
   -DCHECK_PROGRESS, for livelock (non-progress cycles under weak fairness).

   3 processes x 2 threads, 4 communicators A={0,1}, B={1,2}, C={0,2}, W={0,1,2}; each thread
   makes its admitted calls in program order, and the orders cross between processes:
     P0: t0 = A, W     t1 = C
     P1: t0 = A        t1 = W, B
     P2: t0 = B, C     t1 = W
   (a correct MPI program: with native MULTIPLE it completes A, W, B, C in that order).
   An agreement round on communicator X is a nonblocking allreduce(AND): a member posts its
   contribution and later observes the result; both need its process's lock (PMPI_Iallreduce,
   PMPI_Test), and the lock is held across the admitted call itself, which completes only when
   every member is inside it. Without -DPRESENCE the presence round is left out: spin then
   finds the deadlock that motivated it. */

#define NPROC 3
#define NCOMM 4
#define NONE 255

/* communicator ids (the priority order) and members */
byte comm_id[NCOMM];
bool member[NCOMM * NPROC];
byte nmembers[NCOMM];
#define MEMBER(x, p) member[(x) * NPROC + (p)]

/* one agreement round per communicator at a time (calls on a communicator are ordered) */
byte posted[NCOMM];      /* contributions posted in the current round */
bool acc[NCOMM];         /* AND so far */
bool result[NCOMM];      /* result of the last completed round */
byte generation[NCOMM];  /* completed rounds */

/* per process */
byte lock[NPROC];        /* 0 = free, else thread number + 1 */
bool in_use[NPROC];
byte lowest[NPROC];

byte finished = 0;

/* Post `v` to the current round of x, then observe its result; each needs p's lock. */
inline round(x, p, me, v, out) {
  byte gen;
  atomic {
    lock[p] == 0 || lock[p] == me ->
    gen = generation[x];
    acc[x] = (posted[x] == 0 -> v : (acc[x] && v));
    posted[x]++;
    if
    :: posted[x] == nmembers[x] -> result[x] = acc[x]; posted[x] = 0; generation[x]++
    :: else -> skip
    fi
  }
  atomic { (lock[p] == 0 || lock[p] == me) && generation[x] != gen -> out = result[x] }
}

inline admitted_call(x, p, me) {
  bool mine, all;
#ifdef PRESENCE
  round(x, p, me, 1, all);
#endif
  do
  :: atomic {
       lock[p] == 0 ->
       if
       :: comm_id[x] < lowest[p] -> lowest[p] = comm_id[x]
       :: else -> skip
       fi;
       mine = (!in_use[p] && comm_id[x] <= lowest[p]);
       if
       :: mine -> in_use[p] = true
       :: else -> skip
       fi
     }
     round(x, p, me, mine, all);
     if
     :: all -> break
     :: else -> atomic { lock[p] == 0 -> if :: mine -> in_use[p] = false :: else -> skip fi }
     fi
  od;
  /* the blocking call itself, under the lock: done when every member is inside */
  atomic { lock[p] == 0 -> lock[p] = me };
  round(x, p, me, 1, all);
progress_call:
  atomic {
    lock[p] = 0;
    in_use[p] = false;
    if
    :: lowest[p] == comm_id[x] -> lowest[p] = NONE
    :: else -> skip
    fi
  }
}

proctype thread(byte p; byte me; byte first; byte second) {
  admitted_call(first, p, me);
  if
  :: second != NONE -> admitted_call(second, p, me)
  :: else -> skip
  fi;
  finished++
}

#define A 0
#define B 1
#define C 2
#define W 3

init {
  atomic {
    comm_id[A] = 10; comm_id[B] = 20; comm_id[C] = 5; comm_id[W] = 7;
    MEMBER(A, 0) = 1; MEMBER(A, 1) = 1; nmembers[A] = 2;
    MEMBER(B, 1) = 1; MEMBER(B, 2) = 1; nmembers[B] = 2;
    MEMBER(C, 0) = 1; MEMBER(C, 2) = 1; nmembers[C] = 2;
    MEMBER(W, 0) = 1; MEMBER(W, 1) = 1; MEMBER(W, 2) = 1; nmembers[W] = 3;
    lowest[0] = NONE; lowest[1] = NONE; lowest[2] = NONE;
    run thread(0, 1, A, W); run thread(0, 2, C, NONE);
    run thread(1, 1, A, NONE); run thread(1, 2, W, B);
    run thread(2, 1, B, C); run thread(2, 2, W, NONE)
  }
  finished == 6
}

#ifdef CHECK_TERMINATION
ltl all_done { <> (finished == 6) }
#endif
