/* Promela model of tsmpi's lock2d probe policy (TSMPI_PROBE=lock2d) on one communicator: the
   sparse 2-D (source, tag) lock map of seed 001 §2.1 (Listing 1.2) with announce-then-check
   acquisition, the polling receive of Listing 1.5, and the blocking mode Table 1 allows while
   only one pattern class has been seen, left (the key released) as soon as another thread
   records a second class.

   Checked by (the command for a CTest test):
     models/check.sh models/lock2d.pml WORKDIR \
         --safety-only --expect-deadlock-without SWITCH -DSWITCH
   i.e. with -DSWITCH spin must find no assertion violation and no invalid end state (deadlock);
   without -DSWITCH (a thread in blocking mode never re-reads the polling flag: the naive
   "lock map(src,tag); blocking probe" of Listings 1.1/1.2) spin must find the spurious deadlock
   of Listings 1.3/1.4 as an invalid end state. No non-progress-cycle check: announce-then-check
   can make two threads fail each other forever in lock-step (tsmpi's backoff breaks that in
   practice), which is a livelock this model does not claim to exclude.

   One run explores two configurations (init picks one nondeterministically, so the state space
   is their sum, not their product):
   1. Listings 1.3/1.4. Rank 0 sends tag 1, waits for the reply, sends tag 2. Rank 1 has thread
      A, probe/recv (0, 2), and thread B, probe/recv (0, ANY_TAG), which then sends the reply.
      Each thread first records its pattern class; the one that adds the second class sets
      the communicator's `polling` flag, so in the run of Listing 1.3/1.4 that deadlocks
      natively A finds the flag clear, takes (0,2) in blocking mode and waits holding it,
      until B's record makes it release the key and poll. A must get the tag-2 message, B the
      tag-1 message, and everybody must finish.
   2. Three threads with four lock/unlock cycles each, crossing every kind of key:
        T0: (0,1) (*,*) (0,*) (1,*)    T1: (0,*) (*,2) (0,1) (*,*)    T2: (*,1) (1,2) (*,2) (*,1)
      (point vs point, row vs point, column vs point, row vs column, row vs row, column vs
      column, matrix vs everything, matrix vs matrix, and disjoint pairs such as two rows or
      two columns held at once).
   In both, a ghost check asserts on every acquisition that no other thread holds an
   overlapping key, and at the end that every held flag and usage count is back to zero.

   Every store, CAS and increment of the lock map is its own Promela statement (atomic{} only
   joins one such step with ghost bookkeeping), so all interleavings between a thread's
   announce and its check are explored; the check's loads are separate statements too.
   Abstractions: MPI's matching queue is an array of tags from rank 0 (source 0 implicit) kept in
   arrival order, and iprobe/receive are each one atomic step (MPI's own lock). A backoff retry
   (after a failed try_lock, or after an empty iprobe in polling mode) is modelled as waiting
   until some other thread has written shared state since the attempt began (ghost bit
   me of `dirty`): a retry against unchanged state would repeat the failure exactly, so
   nothing is lost, and a thread that could only retry forever shows up as blocked, which is
   how spin reports the deadlock of the negative control. Likewise a blocking-mode wait
   (iprobe + re-read the polling flag, repeated) is the guard "a matching message is queued or
   polling is set". */

#define ANY 255
#define NS 2            /* sources 0, 1 */
#define NT 3            /* tags 1, 2 (index 0 unused) */
#define NTHR 3          /* threads that take keys */
#define QMAX 2

/* ---- the lock map (the C++ one in src/locking) ---- */
bit  point[NS * NT];
bit  row_held[NS];
byte row_usage[NS];
bit  col_held[NT];
byte col_usage[NT];
bit  matrix_held;
byte matrix_usage;
byte held_rows;
byte held_cols;
#define P(s, t) ((s) * NT + (t))

/* ---- the communicator's pattern classes (Table 1) ---- */
byte seen_classes;      /* bits: 1 (s,t)  2 (s,*)  4 (*,t)  8 (*,*) */
bool polling;           /* set once two classes have been seen; never cleared */

/* ---- MPI's unexpected queue from rank 0 to rank 1, and the reply channel ---- */
byte q[QMAX];
byte qlen;
chan reply = [1] of { bit };

/* ---- ghosts ---- */
byte dirty;             /* bit i: shared state written by someone other than thread i since
                           thread i's current attempt began */
bool gh[NTHR];          /* holds a key ... */
byte gs[NTHR];          /* ... (gs, gt) */
byte gt[NTHR];
byte result[NTHR];      /* tag received */
byte finished;

/* mark every other thread's retry as worthwhile; begin an attempt; back off until worthwhile */
#define TOUCH dirty = dirty | (((1 << NTHR) - 1) & ~(1 << me))
#define BEGIN dirty = dirty & ~(1 << me)
#define BACKOFF (dirty & (1 << me))

#define OVL(s1, t1, s2, t2) \
  ((s1 == ANY || s2 == ANY || s1 == s2) && (t1 == ANY || t2 == ANY || t1 == t2))

#define CLASS(s, t) \
  (s != ANY && t != ANY -> 1 : (s != ANY -> 2 : (t != ANY -> 4 : 8)))

/* a message from rank 0 with tag `tag` matches key (s, t) */
#define M(s, t, tag) ((s == ANY || s == 0) && (t == ANY || t == tag))
#define MATCH(s, t) ((qlen > 0 && M(s, t, q[0])) || (qlen > 1 && M(s, t, q[1])))

/* try_lock(s, t): sets the local `ok`; uses the local `conflict` */
inline try_lock(s, t) {
  if
  :: s != ANY && t != ANY ->
     atomic { BEGIN;
              if :: point[P(s, t)] == 0 -> point[P(s, t)] = 1; ok = true; TOUCH
                 :: else -> ok = false fi };
     if
     :: ok ->
        atomic { row_usage[s]++; TOUCH };
        atomic { col_usage[t]++; TOUCH };
        atomic { matrix_usage++; TOUCH };
        conflict = matrix_held;
        conflict = (conflict || row_held[s]);
        conflict = (conflict || col_held[t]);
        if
        :: conflict ->
           atomic { matrix_usage--; TOUCH };
           atomic { col_usage[t]--; TOUCH };
           atomic { row_usage[s]--; TOUCH };
           atomic { point[P(s, t)] = 0; ok = false; conflict = false; TOUCH }
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: s != ANY && t == ANY ->
     atomic { BEGIN;
              if :: row_held[s] == 0 -> row_held[s] = 1; ok = true; TOUCH
                 :: else -> ok = false fi };
     if
     :: ok ->
        atomic { held_rows++; TOUCH };
        atomic { matrix_usage++; TOUCH };
        conflict = matrix_held;
        conflict = (conflict || row_usage[s] > 0);
        conflict = (conflict || held_cols > 0);
        if
        :: conflict ->
           atomic { matrix_usage--; TOUCH };
           atomic { held_rows--; TOUCH };
           atomic { row_held[s] = 0; ok = false; conflict = false; TOUCH }
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: s == ANY && t != ANY ->
     atomic { BEGIN;
              if :: col_held[t] == 0 -> col_held[t] = 1; ok = true; TOUCH
                 :: else -> ok = false fi };
     if
     :: ok ->
        atomic { held_cols++; TOUCH };
        atomic { matrix_usage++; TOUCH };
        conflict = matrix_held;
        conflict = (conflict || col_usage[t] > 0);
        conflict = (conflict || held_rows > 0);
        if
        :: conflict ->
           atomic { matrix_usage--; TOUCH };
           atomic { held_cols--; TOUCH };
           atomic { col_held[t] = 0; ok = false; conflict = false; TOUCH }
        :: else -> skip
        fi
     :: else -> skip
     fi
  :: s == ANY && t == ANY ->
     atomic { BEGIN;
              if :: matrix_held == 0 -> matrix_held = 1; ok = true; TOUCH
                 :: else -> ok = false fi };
     if
     :: ok ->
        conflict = (matrix_usage > 0);
        if
        :: conflict -> atomic { matrix_held = 0; ok = false; conflict = false; TOUCH }
        :: else -> skip
        fi
     :: else -> skip
     fi
  fi;
  if   /* ghost: acquired; nobody else may hold an overlapping key */
  :: ok ->
     d_step {
       assert(!(me != 0 && gh[0] && OVL(s, t, gs[0], gt[0])));
       assert(!(me != 1 && gh[1] && OVL(s, t, gs[1], gt[1])));
       assert(!(me != 2 && gh[2] && OVL(s, t, gs[2], gt[2])));
       gh[me] = true; gs[me] = s; gt[me] = t
     }
  :: else -> skip
  fi
}

inline unlock(s, t) {
  d_step { gh[me] = false; gs[me] = 0; gt[me] = 0 };
  if
  :: s != ANY && t != ANY ->
     atomic { matrix_usage--; TOUCH };
     atomic { col_usage[t]--; TOUCH };
     atomic { row_usage[s]--; TOUCH };
     atomic { point[P(s, t)] = 0; TOUCH }
  :: s != ANY && t == ANY ->
     atomic { matrix_usage--; TOUCH };
     atomic { held_rows--; TOUCH };
     atomic { row_held[s] = 0; TOUCH }
  :: s == ANY && t != ANY ->
     atomic { matrix_usage--; TOUCH };
     atomic { held_cols--; TOUCH };
     atomic { col_held[t] = 0; TOUCH }
  :: s == ANY && t == ANY ->
     atomic { matrix_held = 0; TOUCH }
  fi
}

/* Record this call's pattern class (fetch_or); the thread that adds a second class sets
   `polling` (the blocking -> polling switch). */
inline note_pattern(s, t) {
  atomic { old = seen_classes; seen_classes = seen_classes | CLASS(s, t); TOUCH };
  if
  :: (old | CLASS(s, t)) != CLASS(s, t) -> atomic { polling = true; TOUCH }
  :: else -> skip
  fi;
  old = 0
}

/* probe/recv(s, t) on rank 1 (Listing 1.5, with Table 1's blocking mode) */
proctype receiver(byte me; byte s; byte t; bit replies) {
  bool ok, conflict, blocking;
  byte old, got, i;
  note_pattern(s, t);
#ifndef SWITCH
  blocking = !polling;   /* decided once, never revisited */
#endif
  do
  :: try_lock(s, t);
     if
     :: ok ->
        do
        :: d_step {   /* iprobe: the earliest queued message matching (s, t) */
             got = 0;
             if :: qlen > 0 && M(s, t, q[0]) -> got = q[0]
                :: else -> if :: qlen > 1 && M(s, t, q[1]) -> got = q[1] :: else -> skip fi
             fi
           };
           if
           :: got != 0 ->
              d_step {   /* irecv(source 0, tag got): the earliest message with exactly that tag */
                i = 0;
                do
                :: i < qlen && q[i] != got -> i++
                :: else -> break
                od;
                assert(i < qlen);   /* the probed message is still there */
                do
                :: i + 1 < qlen -> q[i] = q[i + 1]; i++
                :: else -> break
                od;
                qlen--; q[qlen] = 0; i = 0;
                result[me] = got; TOUCH
              };
              break
           :: else ->
#ifdef SWITCH
              if
              :: !polling -> atomic { MATCH(s, t) || polling }  /* blocking mode, key held */
              :: else -> break   /* polling: nothing there, let others in */
              fi
#else
              if
              :: blocking -> MATCH(s, t)   /* blocking probe, key held */
              :: else -> break
              fi
#endif
           fi
        od;
        unlock(s, t);
        if :: got != 0 -> break :: else -> skip fi
     :: else -> skip
     fi;
     BACKOFF   /* retry once something changed */
  od;
  if
  :: replies -> reply!1
  :: else -> skip
  fi;
  finished++
}

proctype rank0(byte me) {
  atomic { q[qlen] = 1; qlen++; TOUCH };   /* send(..., 1, 1, comm) */
  reply?_;                                  /* rcv(..., 1, 1, comm) */
  atomic { q[qlen] = 2; qlen++; TOUCH };   /* send(..., 1, 2, comm) */
  finished++
}

/* four lock/unlock cycles, keys (key_s, key_t)[me * 4 + k] */
byte key_s[NTHR * 4];
byte key_t[NTHR * 4];
#define KS key_s[me * 4 + k]
#define KT key_t[me * 4 + k]

proctype cycler(byte me) {
  bool ok, conflict;
  byte k;
  do
  :: k < 4 ->
     try_lock(KS, KT);
     if
     :: ok -> unlock(KS, KT); k++
     :: else -> BACKOFF
     fi
  :: else -> break
  od;
  finished++
}

init {
  if
  :: atomic {   /* configuration 1: Listings 1.3/1.4 */
       run receiver(0, 0, 2, 0);     /* thread A: probe/recv(0, 2) */
       run receiver(1, 0, ANY, 1);   /* thread B: probe/recv(0, ANY_TAG), then the reply */
       run rank0(3)
     };
     finished == 3;
     assert(result[0] == 2 && result[1] == 1 && qlen == 0)
  :: atomic {   /* configuration 2: mutual exclusion across key kinds */
       key_s[0] = 0;   key_t[0] = 1;    key_s[1] = ANY; key_t[1] = ANY;
       key_s[2] = 0;   key_t[2] = ANY;  key_s[3] = 1;   key_t[3] = ANY;
       key_s[4] = 0;   key_t[4] = ANY;  key_s[5] = ANY; key_t[5] = 2;
       key_s[6] = 0;   key_t[6] = 1;    key_s[7] = ANY; key_t[7] = ANY;
       key_s[8] = ANY; key_t[8] = 1;    key_s[9] = 1;   key_t[9] = 2;
       key_s[10] = ANY; key_t[10] = 2;  key_s[11] = ANY; key_t[11] = 1;
       run cycler(0); run cycler(1); run cycler(2)
     };
     finished == 3
  fi;
  /* the map is back to empty */
  assert(matrix_held == 0 && matrix_usage == 0 && held_rows == 0 && held_cols == 0);
  assert(row_held[0] == 0 && row_held[1] == 0 && row_usage[0] == 0 && row_usage[1] == 0);
  assert(col_held[1] == 0 && col_held[2] == 0 && col_usage[1] == 0 && col_usage[2] == 0);
  assert(point[P(0, 1)] == 0 && point[P(0, 2)] == 0 && point[P(1, 2)] == 0)
}
