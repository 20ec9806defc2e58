/* Promela model of the thread-rank engine's two lock-free rendezvous (src/ranks/team.h) and the
   futex-style waits under them (src/ranks/wake.h). One run explores five configurations (init
   picks one nondeterministically, so the state space is their sum):
   1. Team: 3 members x 3 rounds of a hierarchical collective. Rounds are numbered per member
      when the call is made and a nonblocking call (MPI_Ibcast, MPI_Iallreduce, ...) runs on a
      background worker, so one member can have several rounds in flight: every (member, round)
      call is its own process, which covers any mix of blocking and nonblocking calls. Member
      i's call of round k: wait until departed >= 3k, write slot[i] (tagged k+1),
      arrived.fetch_add; the last to arrive reads every slot and the buffer it points to,
      allocates round k's result (acc[k]) and points `shared` at it, then stores
      released = k+1; the others wait until released >= k+1; every member reads `shared` and
      acc[k] (a reduce's copy-out) and every non-root member the root's slot and buffer (a
      broadcast's copy), then departs (departed += 1); the root (the broadcast source,
      root = k mod 3) and the last arriver wait until departed >= 3(k+1) before returning, the
      last then frees acc[k]. A call's buffer is live until the call returns (the caller may
      then free or reuse it).
      Checked: the last arriver finds every slot tagged with its round and every buffer live;
      every member finds `shared`, acc[k] and the root's slot/buffer of its round; a member
      writing its slot never overwrites one that a call of another round may still read (ghost
      `reading`, set at the fetch_add, asserted at the write); exactly one last arriver per
      round; everybody finishes. Team's waits are Gate::wait_until's contract -- a guard on
      the value -- which configurations 2, 4 and 5 check of the Gate itself (with the full
      futex protocol inside Team the state space is ~50M states, too slow for a test).
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
         --expect-assertion-with MUTANT_NO_WAIT_DEPARTED \
         --expect-deadlock-with MUTANT_GATE_EARLY_SLEEPERS \
         --expect-assertion-with MUTANT_DONE_LOAD_STORE
   i.e. no assertion violation, no invalid end state (deadlock), no non-progress cycle, and
   spin must find the failure of each mutant:
     MUTANT_NO_ARRIVAL_WAIT      arrive() without the departed >= n*k wait: a call of round k+1
                                 overwrites a slot a call of round k still reads (possible
                                 because a member can have two rounds in flight; with one call
                                 at a time per member the wait_departed()s alone suffice);
     MUTANT_NO_WAIT_DEPARTED     the root and the last arriver return without wait_departed():
                                 the root's buffer or acc[k] is freed while others read it;
     MUTANT_GATE_EARLY_SLEEPERS  Gate::advance/store_and_wake read `sleepers` before changing
                                 the value: a waiter that registers in between sleeps forever;
     MUTANT_DONE_LOAD_STORE      Done::set() as load + store instead of exchange: a waiter that
                                 CASes 0 -> 2 in between sleeps forever after set(). */

#define N 3             /* members / threads */
#define R 3             /* rounds */
#define NCALL 9         /* N * R Team calls */
#define ALL 7           /* (1 << N) - 1 */

/* ---- Gate (src/ranks/wake.h): value, sleepers, and the futex on value ---- */
#define REL 0           /* Team::released_ */
#define DEP 1           /* Team::departed_ */
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
byte arrived;           /* Team::arrived_ */
byte slot[N];           /* member i's slot: k + 1 when written in round k */
bit buf[NCALL];         /* the buffer of call p = i * R + k: 1 while the call has not returned */
byte shared;            /* Team::shared: k + 1 when written by round k's last arriver */
bit acc[R];             /* round k's result buffer (`shared` points to it): 1 until freed */
byte reading[NCALL];    /* ghost: bit j: call p may still read slot[j] (and the buffer there) */
byte lasts[R];          /* ghost: last arrivers per round */

/* ghost: member i writing its slot in round k; no call of another round may still read it */
#define STALE(p, i, k) ((reading[p] & (1 << (i))) != 0 && (p) % R != (k))
#define NO_STALE_READER(i, k) \
  assert(!(STALE(0, i, k) || STALE(1, i, k) || STALE(2, i, k) || STALE(3, i, k) || \
           STALE(4, i, k) || STALE(5, i, k) || STALE(6, i, k) || STALE(7, i, k) || \
           STALE(8, i, k)))

#define READ_SLOT(j, k) assert(slot[j] == (k) + 1 && buf[(j) * R + (k)] == 1)

/* Member i's call of round k. Team's waits are Gate::wait_until's contract (returns once the
   value has reached the target; never sleeps through the change, which configurations 2, 4 and 5
   check of the Gate itself): a guard on the value. A guard stays true once true, so joining it
   with the step after it loses no behaviour. */
proctype call(byte i; byte k) {
  byte me = i * R + k;
  byte root = k % N;
  bool last;
  d_step {   /* arrive: wait until departed >= n*k, write the slot */
#ifndef MUTANT_NO_ARRIVAL_WAIT
    gval[DEP] >= N * k;
#endif
    NO_STALE_READER(i, k);
    slot[i] = k + 1
  };
  d_step {   /* arrived.fetch_add(1) + 1 == n*(k+1) */
    arrived++;
    last = (arrived == N * (k + 1));
    if
    :: last -> reading[me] = ALL; lasts[k]++
    :: else -> reading[me] = (i != root -> (1 << root) : 0)
    fi
  };
  if
  :: last ->   /* combine every contribution, leave the result, release the others */
     d_step {
       READ_SLOT(0, k); READ_SLOT(1, k); READ_SLOT(2, k);
       acc[k] = 1; shared = k + 1;
       reading[me] = (i != root -> (1 << root) : 0)
     };
     gval[REL] = k + 1   /* release(k) */
  :: else -> skip
  fi;
  d_step {   /* wait_released(k); copy out of `shared` (reduce) or the root's buffer (bcast); depart() */
    gval[REL] >= k + 1;
    assert(shared == k + 1 && acc[k] == 1);
    if
    :: i != root -> READ_SLOT(root, k)
    :: else -> skip
    fi;
    reading[me] = 0;
    gval[DEP]++
  };
  d_step {   /* the root and the last arriver: wait_departed(k); the last deletes acc; return */
#ifndef MUTANT_NO_WAIT_DEPARTED
    !(last || i == root) || gval[DEP] >= N * (k + 1);
#endif
    if
    :: last -> acc[k] = 0
    :: else -> skip
    fi;
    buf[me] = 0;   /* the caller may free or reuse its buffer */
    finished++
  }
}

/* ---- 2. ThreadBarrier ---- */
byte bcount;            /* ThreadBarrier::count_ */
byte bgot[R];           /* ghost: indices returned by barrier r */
byte bentered[R];       /* ghost: threads that entered barrier r */

proctype bthread(byte me) {
  byte r, g, idx, v, s;
  do
  :: r < R ->
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
  if
  :: atomic {
       buf[0] = 1; buf[1] = 1; buf[2] = 1; buf[3] = 1; buf[4] = 1;
       buf[5] = 1; buf[6] = 1; buf[7] = 1; buf[8] = 1;
       run call(0, 0); run call(0, 1); run call(0, 2);
       run call(1, 0); run call(1, 1); run call(1, 2);
       run call(2, 0); run call(2, 1); run call(2, 2)
     };
     finished == NCALL;
     assert(lasts[0] == 1 && lasts[1] == 1 && lasts[2] == 1);
     assert(arrived == N * R && gval[DEP] == N * R && gval[REL] == R);
     assert(acc[0] == 0 && acc[1] == 0 && acc[2] == 0)
  :: atomic { run bthread(0); run bthread(1); run bthread(2) };
     finished == N;
     assert(bgot[0] == ALL && bgot[1] == ALL && bgot[2] == ALL);
     assert(bcount == 0 && gval[GEN] == R && gsleep[GEN] == 0)
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
