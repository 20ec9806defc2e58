/* Promela model of the thread-rank engine's two lock-free rendezvous (src/ranks/team.h) and the
   futex-style waits under them (src/ranks/wake.h). One run explores five configurations (init
   picks one nondeterministically, so the state space is their sum):
   1. Team: 3 members x R rounds of a hierarchical collective (R = 4 by default). Rounds are
      numbered per member when the call is made and a nonblocking call (MPI_Ibcast,
      MPI_Iallreduce, ...) runs on a background worker, so one member can have several rounds
      in flight: every (member, round) call is its own process, which covers any mix of
      blocking and nonblocking calls. Each member has DEPTH notes and buffers, used in turn
      (slot k mod DEPTH). Member i's call of round k: enter (wait until its own departed >= k,
      i.e. its round k-1 is over; when k is a multiple of HALF = DEPTH / 2 and k >= HALF, wait
      until every other departed >= k - HALF, i.e. nobody still reads the slots rounds k ..
      k + HALF - 1 refill), write its note and buffers of slot k mod DEPTH (tagged k+1), store
      arrived[i][slot] = k+1, then one of three data paths:
        rounds 0 .. R-3, a small broadcast from root 0: the root arrives and departs without
          waiting for anyone (it may run ahead); the others wait until the root's arrived >=
          k+1 and read its note;
        round R-2, a large Bcast from root 1: every member meets (waits until every other
          arrived >= k+1 and reads its note); the others read the root's buffer; the root waits
          until every departed >= k+1 before returning;
        round R-1, a large reduction: every member meets; the leader (member 0) reads every
          member's buffer, allocates round k's result (acc[k]), leaves `shared` = k+1 and
          stores published = k+1; the others wait until published >= k+1 and read `shared`
          and acc[k]; the leader waits until every departed >= k+1, then frees acc[k];
      then departs (departed[i] = k+1). A call's buffer is live until the call returns.
      Checked: every note and buffer read is tagged with the reader's round and live; `shared`
      and acc[k] are round k's when read; a member writing its note or buffers of a slot never
      overwrites one that a call of another round may still read (ghost `reading`, set when the
      call starts reading, asserted at the write); everybody finishes. Team's waits are
      Gate::wait_until's contract -- a guard on the value -- which configurations 2, 4 and 5
      check of the Gate itself. The CTest runs DEPTH = 2 with R = 4: every slot is reused and
      the root of rounds 0 and 1 runs ahead into round 2, which refills round 0's slot; the
      departures are checked at every round (HALF = 1), the same formula as the code's
      kCheckEvery = 32. DEPTH = 4 (checked every second round) needs R >= 7 for a root to run
      past a whole ring; at R = 6 safety alone took 10^7 states and 2.3 GB, so it is not run:
      tests/ranks/rk_coll.c's broadcast stream fails without the check at the code's depth.
   2. ThreadBarrier: 3 threads x 3 barriers on the full Gate; each barrier returns the indices
      0, 1, 2 once each and nobody leaves barrier r before all three have entered it.
   3. Done: one set() against two wait()ers; a waiter returns only after set() and never
      sleeps on the word after set() has returned (the lost wake-up; asserted when spin's
      `timeout` fires, i.e. when nobody can move).
   4. Gate: two advance()s against two wait_until(2).
   5. Gate: store_and_wake(1), store_and_wake(2) against two wait_until(2).
   Every load, store and read-modify-write of the Gate and Done code is its own Promela
   statement; Promela's interleaving is sequentially consistent, as the code's seq_cst Gate
   operations and the RMWs on Done's single word are. futex_wait(word, v) blocks atomically
   only if the word still holds v (a bit of the caller in `*fut`); futex_wake_all clears every
   bit; spurious wake-ups are not modelled. The spin-then-yield phase of a wait is one
   nondeterministic check of the condition: later checks are interleavings of this one. In
   Team, d_step joins a wait's guard with the step after it (the guard stays true once true,
   so no behaviour is lost) and a member's reads of one phase into one step (a write racing
   them is caught by the ghost at the write either way).

   Checked by (the command for a CTest test):
     models/check.sh models/team.pml WORKDIR \
         --expect-assertion-with MUTANT_NO_ARRIVAL_WAIT \
         --expect-assertion-with MUTANT_NO_RING_CHECK \
         --expect-assertion-with MUTANT_NO_WAIT_DEPARTED \
         --expect-deadlock-with MUTANT_GATE_EARLY_SLEEPERS \
         --expect-assertion-with MUTANT_DONE_LOAD_STORE
   i.e. no assertion violation, no invalid end state (deadlock), no non-progress cycle, and
   spin must find the failure of each mutant:
     MUTANT_NO_ARRIVAL_WAIT      enter() without waiting for the member's own previous round: its
                                 call of round k+DEPTH overwrites a note a call of round k
                                 still reads (possible because a member can have rounds in
                                 flight on workers);
     MUTANT_NO_RING_CHECK        enter() without waiting for the others' departures: a small
                                 broadcast's root, running ahead, overwrites a note of round
                                 k-DEPTH a slower member still reads;
     MUTANT_NO_WAIT_DEPARTED     the root and the leader return without wait_departed(): the
                                 root's buffer or acc[k] is freed while others read it;
     MUTANT_GATE_EARLY_SLEEPERS  Gate::advance/store_and_wake read `sleepers` before changing
                                 the value: a waiter that registers in between sleeps forever;
     MUTANT_DONE_LOAD_STORE      Done::set() as load + store instead of exchange: a waiter that
                                 CASes 0 -> 2 in between sleeps forever after set(). */

#define N 3             /* members / threads */
#ifndef R
#define R 4             /* Team rounds (ThreadBarrier: 3 barriers) */
#endif
#ifndef DEPTH
#define DEPTH 2         /* Team::kDepth: notes and buffers per member */
#endif
#define HALF (DEPTH / 2)  /* Team::kCheckEvery */
#define NCALL (N * R)   /* Team calls */
#define BR 3            /* ThreadBarrier rounds */
#define ALL 7           /* (1 << N) - 1 */

/* ---- Gate (src/ranks/wake.h): value, sleepers, and the futex on value ---- */
#define GEN 2           /* ThreadBarrier::gen_ */
#define GT 3            /* the Gate of configurations 4 and 5 */
byte gval[4];
byte gsleep[4];
short gfut[4];          /* bit p: process p blocked in futex_wait on gval[g] */

inline futex_wait_gate(fg, fseen, fme) {
  atomic {   /* blocks only if the word still holds `fseen`, until a futex_wake_all */
    if
    :: gval[fg] == fseen -> gfut[fg] = gfut[fg] | (1 << fme); (gfut[fg] & (1 << fme)) == 0
    :: else -> skip
    fi
  }
}

inline gate_wake_if(wg, wcond) {
  if
  :: wcond -> gfut[wg] = 0   /* futex_wake_all */
  :: else -> skip
  fi
}

inline gate_advance(ag, as) {
#ifdef MUTANT_GATE_EARLY_SLEEPERS
  as = gsleep[ag];
  gval[ag]++;
  gate_wake_if(ag, as != 0);
  as = 0
#else
  gval[ag]++;
  gate_wake_if(ag, gsleep[ag] != 0)
#endif
}

inline gate_store_and_wake(sg, sval, ss) {
#ifdef MUTANT_GATE_EARLY_SLEEPERS
  ss = gsleep[sg];
  gval[sg] = sval;
  gate_wake_if(sg, ss != 0);
  ss = 0
#else
  gval[sg] = sval;
  gate_wake_if(sg, gsleep[sg] != 0)
#endif
}

/* Blocks until the value differs from `seen`. */
inline gate_wait_past(pg, pseen, pme) {
  if
  :: gval[pg] != pseen -> skip   /* spin_then_yield saw the change */
  :: else ->
     gsleep[pg]++;
     do
     :: gval[pg] == pseen -> futex_wait_gate(pg, pseen, pme)
     :: else -> break
     od;
     gsleep[pg]--
  fi
}

/* Blocks until the value has reached `target`; uses the local v. */
inline gate_wait_until(ug, utarget, ume) {
  do
  :: v = gval[ug];
     if
     :: v >= utarget -> break
     :: else -> gate_wait_past(ug, v, ume)
     fi
  od;
  v = 0
}

byte finished;

/* ---- 1. Team ---- */
#define SLOTS (N * DEPTH)
byte arrived[SLOTS];    /* Team note arrived gates: member i, slot q at [i * DEPTH + q] */
byte note[SLOTS];       /* note and buffers of member i, slot q: k + 1 when written by round k */
byte departed[N];       /* member i's departed gate */
byte published;         /* the leader's published_round gate */
bit buf[NCALL];         /* the buffer of call p = i * R + k: 1 while the call has not returned */
byte shared;            /* Team::Published::shared: k + 1 when left by round k's leader */
bit acc[R];             /* round k's result buffer (`shared` points to it): 1 until freed */
byte reading[NCALL];    /* ghost: bit j: call p may still read member j's note/buffers */

#define SLOT(i, k) ((i) * DEPTH + (k) % DEPTH)
/* ghost: member i writing its note of round k's slot; no call of another round of that slot
   may still read it */
#define STALE(p, i, k) ((reading[p] & (1 << (i))) != 0 && (p) % R != (k) && ((p) % R) % DEPTH == (k) % DEPTH)
#define READ_NOTE(j, k) assert(note[SLOT(j, k)] == (k) + 1)
#define READ_BUF(j, k) assert(note[SLOT(j, k)] == (k) + 1 && buf[(j) * R + (k)] == 1)
#define ARRIVED(j, k) (arrived[SLOT(j, k)] >= (k) + 1)
#define DEPARTED_ALL(k) (departed[0] >= (k) + 1 && departed[1] >= (k) + 1 && departed[2] >= (k) + 1)
#ifdef MUTANT_NO_ARRIVAL_WAIT
#define OWN_ROUND_OVER(i, k) true
#else
#define OWN_ROUND_OVER(i, k) (departed[i] >= (k))
#endif
#ifdef MUTANT_NO_RING_CHECK
#define RING_FREE(i, k) true
#else
#define LEFT(j, i, r) ((i) == (j) || departed[j] >= (r))
#define RING_FREE(i, k) \
  ((k) % HALF != 0 || (k) < HALF || (LEFT(0, i, (k) - HALF) && LEFT(1, i, (k) - HALF) && LEFT(2, i, (k) - HALF)))
#endif
#define SMALL(k) ((k) < R - 2)        /* a small broadcast from root 0 */
#define LARGE_BCAST(k) ((k) == R - 2)  /* from root 1 */
#define REDUCTION(k) ((k) == R - 1)    /* leader 0 */

/* Member i's call of round k. Team's waits are Gate::wait_until's contract (returns once the
   value has reached the target; never sleeps through the change, which configurations 2, 4 and 5
   check of the Gate itself): a guard on the value. A guard stays true once true, so joining it
   with the step after it loses no behaviour. */
proctype call(byte i; byte k) {
  byte me = i * R + k;
  byte p;
  d_step {   /* enter: the member's own round k-1 is over, and nobody reads the slots it refills */
    OWN_ROUND_OVER(i, k) && RING_FREE(i, k);
    for (p : 0 .. NCALL - 1) { assert(!STALE(p, i, k)) };
    p = 0;
    note[SLOT(i, k)] = k + 1
  };
  arrived[SLOT(i, k)] = k + 1;
  if
  :: SMALL(k) && i == 0 -> skip   /* the root waits for nobody */
  :: SMALL(k) && i != 0 ->        /* meet_one: the root's note */
     d_step { ARRIVED(0, k); READ_NOTE(0, k) }
  :: else ->
     d_step {   /* meet: every member arrived; every note read */
       ARRIVED(0, k) && ARRIVED(1, k) && ARRIVED(2, k);
       READ_NOTE(0, k); READ_NOTE(1, k); READ_NOTE(2, k);
       if
       :: LARGE_BCAST(k) && i != 1 -> reading[me] = 1 << 1   /* the root's buffer, next */
       :: REDUCTION(k) && i == 0 -> reading[me] = ALL        /* every buffer, next */
       :: else -> reading[me] = 0
       fi
     };
     if
     :: LARGE_BCAST(k) && i != 1 ->   /* large bcast: copy from the root's buffer */
        d_step { READ_BUF(1, k); reading[me] = 0 }
     :: REDUCTION(k) && i == 0 ->     /* large reduction: the leader combines and publishes */
        d_step {
          READ_BUF(0, k); READ_BUF(1, k); READ_BUF(2, k);
          acc[k] = 1; shared = k + 1;
          reading[me] = 0
        };
        published = k + 1
     :: REDUCTION(k) && i != 0 ->
        d_step { published >= k + 1; assert(shared == k + 1 && acc[k] == 1) }
     :: else -> skip
     fi
  fi;
  departed[i] = k + 1;
  d_step {   /* the root of a large bcast and the leader: wait_departed(k); return */
#ifndef MUTANT_NO_WAIT_DEPARTED
    !((LARGE_BCAST(k) && i == 1) || (REDUCTION(k) && i == 0)) || DEPARTED_ALL(k);
#endif
    if
    :: REDUCTION(k) && i == 0 -> acc[k] = 0
    :: else -> skip
    fi;
    buf[me] = 0;   /* the caller may free or reuse its buffer */
    finished++
  }
}

/* ---- 2. ThreadBarrier ---- */
byte bcount;            /* ThreadBarrier::count_ */
byte bgot[BR];          /* ghost: indices returned by barrier r */
byte bentered[BR];      /* ghost: threads that entered barrier r */

proctype bthread(byte me) {
  byte r, g, idx, v, s;
  do
  :: r < BR ->
     d_step { g = gval[GEN]; bentered[r]++ };
     d_step { idx = bcount; bcount++ };
     if
     :: idx + 1 == N -> bcount = 0; gate_advance(GEN, s)
     :: else -> gate_wait_past(GEN, g, me)
     fi;
     d_step {
       assert(bentered[r] == N);
       assert((bgot[r] & (1 << idx)) == 0);
       bgot[r] = bgot[r] | (1 << idx);
       r++; idx = 0; g = 0
     }
  :: else -> break
  od;
  finished++
}

/* ---- 3. Done ---- */
byte dword;             /* 0 pending, 1 done, 2 pending with a sleeper */
byte dfut;              /* bit p: waiter p blocked in futex_wait(dword, 2) */
bool dset;              /* ghost: set() has returned */

proctype dsetter() {
  byte old;
#ifdef MUTANT_DONE_LOAD_STORE
  old = dword;
  dword = 1;
#else
  d_step { old = dword; dword = 1 };   /* exchange(1) */
#endif
  if
  :: old == 2 -> d_step { dfut = 0; dset = true }   /* futex_wake_all */
  :: else -> dset = true
  fi;
  finished++
}

proctype dwaiter(byte me) {
  byte s;
  if
  :: dword == 1 -> skip   /* spin_then_yield saw it set */
  :: else ->
     d_step {   /* s = 0; compare_exchange_strong(s, 2) */
       s = dword;
       if
       :: dword == 0 -> dword = 2
       :: else -> skip
       fi
     };
     if
     :: s == 1 -> skip
     :: else ->
        do
        :: dword == 2 ->
           atomic {   /* futex_wait(word, 2) */
             if
             :: dword == 2 -> dfut = dfut | (1 << me); (dfut & (1 << me)) == 0
             :: else -> skip
             fi
           }
        :: else -> break
        od
     fi
  fi;
  assert(dword == 1);   /* returns only after set() */
  finished++
}

/* ---- 4, 5. Gate on its own: wait_until against concurrent advance()s or store_and_wake()s ---- */
proctype gwaker(bit store) {
  byte s;
  if
  :: store -> gate_store_and_wake(GT, 1, s); gate_store_and_wake(GT, 2, s)
  :: else -> gate_advance(GT, s)
  fi;
  finished++
}

proctype gwaiter(byte me) {
  byte v;
  gate_wait_until(GT, 2, me);
  assert(gval[GT] >= 2);   /* returns only once the value has reached the target */
  finished++
}

init {
  byte q;
  if
  :: atomic {
       for (q : 0 .. NCALL - 1) { buf[q] = 1; run call(q / R, q % R) };
       q = 0
     };
     finished == NCALL;
     assert(departed[0] == R && departed[1] == R && departed[2] == R && published == R);
     for (q : 0 .. R - 1) { assert(acc[q] == 0) }
  :: atomic { run bthread(0); run bthread(1); run bthread(2) };
     finished == N;
     assert(bgot[0] == ALL && bgot[1] == ALL && bgot[2] == ALL);
     assert(bcount == 0 && gval[GEN] == BR && gsleep[GEN] == 0)
  :: atomic { run dsetter(); run dwaiter(0); run dwaiter(1) };
     finished == 3 || timeout;
     assert(!(dset && dfut != 0));   /* a waiter sleeps on the word after set() */
     finished == 3
  :: atomic { run gwaker(0); run gwaker(0); run gwaiter(0); run gwaiter(1) };
     finished == 4;
     assert(gval[GT] == 2 && gsleep[GT] == 0)
  :: atomic { run gwaker(1); run gwaiter(0); run gwaiter(1) };
     finished == 3;
     assert(gval[GT] == 2 && gsleep[GT] == 0)
  fi
}
