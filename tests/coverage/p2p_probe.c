/* Coverage: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv with
   MPI_ANY_SOURCE / MPI_ANY_TAG and MPI_PROC_NULL; a probe followed by every kind of receive
   (MPI_Recv, MPI_Irecv, a started MPI_Recv_init completed by every completion form,
   MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Mprobe / MPI_Improbe; MPI_Isendrecv(_replace) is in
   p2p_probe_isendrecv.c), since under tsmpi's probe policy the probed message is taken out of
   the MPI and must still reach the receive that follows; MPI_Cancel of a receive of a probed
   message; MPI_Get_count / MPI_Get_elements on probe statuses; two senders and a wildcard
   probe. Ranks 1 and 2 send, rank 0 probes and receives. */
// ranks: 3
#include "coverage.h"

static void fill(int* buf, int n, int base) {
  for (int i = 0; i < n; ++i) buf[i] = base + i;
}
static int same(const int* buf, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != base + i) return 0;
  return 1;
}
/* Rank `from` sends n ints base.. with tag to rank 0. */
static void send_to0(int n, int base, int tag) {
  int buf[64];
  fill(buf, n, base);
  MPI_Send(buf, n, MPI_INT, 0, tag, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_probe");
  MPI_Comm comm = MPI_COMM_WORLD;
  int rc, count, flag, buf[64];
  MPI_Status st;
  MPI_Message msg;
  MPI_Request req;

  /* Probe with both wildcards, allocate, receive with the probed envelope: one message from
     rank 1 (3 ints, tag 11) and one from rank 2 (5 ints, tag 12), in either order. */
  if (rank == 0) {
    char line[2][128];
    for (int m = 0; m < 2; ++m) {
      rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      int* in = calloc((size_t)count, sizeof *in);
      int src = st.MPI_SOURCE, tag = st.MPI_TAG;
      MPI_Status st2;
      int rc2 = MPI_Recv(in, count, MPI_INT, src, tag, comm, &st2);
      int ok = st2.MPI_SOURCE == src && st2.MPI_TAG == tag &&
               same(in, count, src == 1 ? 100 : 200) && count == (src == 1 ? 3 : 5);
      snprintf(line[src - 1], sizeof line[0],
               "probe any/any: rc %d %d source %d tag %d count %d data ok %d", rc, rc2, src, tag,
               count, ok);
      CHECK(ok);
      free(in);
    }
    SAY("%s", line[0]);
    SAY("%s", line[1]);
  } else {
    send_to0(rank == 1 ? 3 : 5, rank == 1 ? 100 : 200, 10 + rank);
  }
  MPI_Barrier(comm);

  /* MPI_Iprobe: polled until the message is there; MPI_Iprobe for a tag nobody sends. */
  if (rank == 0) {
    flag = 0;
    while (!flag) rc = MPI_Iprobe(1, 20, comm, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    int bytes = -1, elements = -1;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    MPI_Get_elements(&st, MPI_INT, &elements);
    SAY("iprobe rc %d flag %d source %d tag %d count %d bytes %d elements %d", rc, flag,
        st.MPI_SOURCE, st.MPI_TAG, count, bytes, elements);
    memset(buf, 0, sizeof buf);
    MPI_Recv(buf, 64, MPI_INT, 1, 20, comm, MPI_STATUS_IGNORE);
    CHECK(same(buf, 4, 300));
    flag = -1;
    rc = MPI_Iprobe(MPI_ANY_SOURCE, 999, comm, &flag, &st);
    SAY("iprobe of a tag nobody sends rc %d flag %d", rc, flag);
    flag = -1;
    rc = MPI_Iprobe(2, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
    SAY("iprobe of a rank that sent nothing rc %d flag %d", rc, flag);
  } else if (rank == 1) {
    send_to0(4, 300, 20);
  }
  MPI_Barrier(comm);

  /* MPI_Mprobe / MPI_Mrecv, then MPI_Improbe (polled) / MPI_Imrecv / MPI_Wait. */
  if (rank == 0) {
    rc = MPI_Mprobe(MPI_ANY_SOURCE, 30, comm, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    memset(buf, 0, sizeof buf);
    MPI_Status st2;
    int rc2 = MPI_Mrecv(buf, count, MPI_INT, &msg, &st2);
    SAY("mprobe rc %d source %d tag %d count %d; mrecv rc %d message null %d source %d data ok %d",
        rc, st.MPI_SOURCE, st.MPI_TAG, count, rc2, msg == MPI_MESSAGE_NULL, st2.MPI_SOURCE,
        same(buf, 6, 400));
    CHECK(same(buf, 6, 400));

    flag = 0;
    while (!flag) rc = MPI_Improbe(1, MPI_ANY_TAG, comm, &flag, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    memset(buf, 0, sizeof buf);
    rc2 = MPI_Imrecv(buf, 64, MPI_INT, &msg, &req);
    int rc3 = MPI_Wait(&req, &st2);
    int count2 = -1;
    MPI_Get_count(&st2, MPI_INT, &count2);
    SAY("improbe rc %d flag %d source %d tag %d count %d; imrecv rc %d message null %d wait rc %d "
        "count %d data ok %d",
        rc, flag, st.MPI_SOURCE, st.MPI_TAG, count, rc2, msg == MPI_MESSAGE_NULL, rc3, count2,
        same(buf, 2, 500));
    CHECK(same(buf, 2, 500));

    flag = -1;
    rc = MPI_Improbe(MPI_ANY_SOURCE, 999, comm, &flag, &msg, &st);
    SAY("improbe of a tag nobody sends rc %d flag %d", rc, flag);
  } else if (rank == 2) {
    send_to0(6, 400, 30);
  } else {
    send_to0(2, 500, 31);
  }
  MPI_Barrier(comm);

  /* MPI_PROC_NULL: every probe finds a message at once, with an MPI_PROC_NULL status; the matched
     forms give MPI_MESSAGE_NO_PROC, which MPI_Mrecv / MPI_Imrecv receive (nothing). */
  {
    rc = MPI_Probe(MPI_PROC_NULL, 1, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("probe proc_null rc %d source proc_null %d tag any %d count %d", rc,
        st.MPI_SOURCE == MPI_PROC_NULL, st.MPI_TAG == MPI_ANY_TAG, count);
    flag = -1;
    rc = MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, comm, &flag, &st);
    SAY("iprobe proc_null rc %d flag %d source proc_null %d", rc, flag,
        st.MPI_SOURCE == MPI_PROC_NULL);
    rc = MPI_Mprobe(MPI_PROC_NULL, 1, comm, &msg, &st);
    SAY("mprobe proc_null rc %d no_proc %d source proc_null %d", rc, msg == MPI_MESSAGE_NO_PROC,
        st.MPI_SOURCE == MPI_PROC_NULL);
    buf[0] = 77;
    rc = MPI_Mrecv(buf, 4, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("mrecv no_proc rc %d message null %d source proc_null %d count %d untouched %d", rc,
        msg == MPI_MESSAGE_NULL, st.MPI_SOURCE == MPI_PROC_NULL, count, buf[0] == 77);
    flag = -1;
    rc = MPI_Improbe(MPI_PROC_NULL, 2, comm, &flag, &msg, &st);
    SAY("improbe proc_null rc %d flag %d no_proc %d", rc, flag, msg == MPI_MESSAGE_NO_PROC);
    rc = MPI_Imrecv(buf, 4, MPI_INT, &msg, &req);
    int rc2 = MPI_Wait(&req, &st);
    SAY("imrecv no_proc rc %d wait rc %d source proc_null %d untouched %d", rc, rc2,
        st.MPI_SOURCE == MPI_PROC_NULL, buf[0] == 77);
  }

  /* A probe, then each kind of receive for the probed message (rank 1 sends, rank 0 receives). */
  if (rank == 0) {
    /* MPI_Probe, then MPI_Irecv + MPI_Wait. */
    MPI_Probe(1, 40, comm, &st);
    memset(buf, 0, sizeof buf);
    MPI_Irecv(buf, 64, MPI_INT, 1, 40, comm, &req);
    rc = MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("probe + irecv: rc %d tag %d count %d data ok %d", rc, st.MPI_TAG, count,
        same(buf, 3, 1040));
    CHECK(same(buf, 3, 1040));

    /* MPI_Probe, then a persistent receive started with MPI_Start, twice (the second message is
       not probed). */
    MPI_Request pr;
    MPI_Recv_init(buf, 64, MPI_INT, 1, 41, comm, &pr);
    int ok = 1;
    for (int round = 0; round < 2; ++round) {
      if (round == 0) MPI_Probe(1, 41, comm, &st);
      memset(buf, 0, sizeof buf);
      MPI_Start(&pr);
      rc = MPI_Wait(&pr, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      ok &= rc == MPI_SUCCESS && count == 3 && st.MPI_TAG == 41 && same(buf, 3, 1041 + 100 * round);
    }
    SAY("probe + start(recv_init), then start again: ok %d request kept %d", ok,
        pr != MPI_REQUEST_NULL);
    CHECK(ok);
    /* MPI_Probe, then MPI_Startall of it and a persistent receive of another tag, completed by
       MPI_Waitall. */
    MPI_Request two[2];
    int other[64];
    two[0] = pr;
    MPI_Recv_init(other, 64, MPI_INT, 1, 42, comm, &two[1]);
    MPI_Probe(1, 41, comm, &st);
    memset(buf, 0, sizeof buf);
    memset(other, 0, sizeof other);
    rc = MPI_Startall(2, two);
    MPI_Status sts[2];
    int rc2 = MPI_Waitall(2, two, sts);
    SAY("probe + startall: rc %d %d tags %d %d data ok %d %d", rc, rc2, sts[0].MPI_TAG,
        sts[1].MPI_TAG, same(buf, 3, 1241), same(other, 3, 1042));
    CHECK(same(buf, 3, 1241) && same(other, 3, 1042));
    MPI_Request_free(&two[0]);
    MPI_Request_free(&two[1]);

    /* MPI_Probe, then MPI_Sendrecv and MPI_Sendrecv_replace receiving the probed message. */
    MPI_Probe(1, 43, comm, &st);
    int out = 43, in[64];
    memset(in, 0, sizeof in);
    rc = MPI_Sendrecv(&out, 1, MPI_INT, 1, 143, in, 64, MPI_INT, 1, 43, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("probe + sendrecv: rc %d tag %d count %d data ok %d", rc, st.MPI_TAG, count,
        same(in, 3, 1043));
    CHECK(same(in, 3, 1043));
    MPI_Probe(1, MPI_ANY_TAG, comm, &st);
    fill(in, 3, 44);
    rc = MPI_Sendrecv_replace(in, 3, MPI_INT, 1, 144, 1, 44, comm, &st);
    SAY("probe + sendrecv_replace: rc %d tag %d data ok %d", rc, st.MPI_TAG, same(in, 3, 1044));
    CHECK(same(in, 3, 1044));

    /* Probing twice returns the same message; a receive for another tag gets the other message
       first; then a wildcard receive gets the probed one. */
    MPI_Status first, second;
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &first);
    MPI_Probe(1, MPI_ANY_TAG, comm, &second);
    SAY("probe twice: tags %d %d", first.MPI_TAG, second.MPI_TAG);
    memset(buf, 0, sizeof buf);
    MPI_Recv(buf, 64, MPI_INT, 1, 46, comm, &st);
    SAY("recv of the later tag 46: tag %d data ok %d", st.MPI_TAG, same(buf, 3, 1046));
    CHECK(same(buf, 3, 1046));
    memset(buf, 0, sizeof buf);
    MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    SAY("then wildcard recv: tag %d data ok %d", st.MPI_TAG, same(buf, 3, 1045));
    CHECK(same(buf, 3, 1045));

    /* MPI_Probe, MPI_Iprobe, MPI_Improbe of the same message, then MPI_Mrecv. */
    MPI_Probe(1, 47, comm, &st);
    flag = 0;
    MPI_Iprobe(1, 47, comm, &flag, &st);
    SAY("probe + iprobe: flag %d tag %d", flag, st.MPI_TAG);
    flag = 0;
    MPI_Improbe(MPI_ANY_SOURCE, 47, comm, &flag, &msg, &st);
    memset(buf, 0, sizeof buf);
    rc = MPI_Mrecv(buf, 64, MPI_INT, &msg, &st);
    SAY("probe + improbe + mrecv: flag %d rc %d tag %d data ok %d", flag, rc, st.MPI_TAG,
        same(buf, 3, 1047));
    CHECK(same(buf, 3, 1047));

    /* MPI_Probe, then MPI_Irecv and MPI_Cancel: the message has arrived and is matched, so the
       receive completes normally and is not cancelled. */
    MPI_Probe(1, 48, comm, &st);
    memset(buf, 0, sizeof buf);
    MPI_Irecv(buf, 64, MPI_INT, 1, 48, comm, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    int cancelled = -1;
    MPI_Test_cancelled(&st, &cancelled);
    SAY("probe + irecv + cancel: cancelled %d data ok %d", cancelled, same(buf, 3, 1048));
    CHECK(!cancelled && same(buf, 3, 1048));

    /* MPI_Probe, then MPI_Request_get_status / MPI_Test on the MPI_Irecv of the message. */
    MPI_Probe(1, 49, comm, &st);
    memset(buf, 0, sizeof buf);
    MPI_Irecv(buf, 64, MPI_INT, MPI_ANY_SOURCE, 49, comm, &req);
    flag = 0;
    while (!flag) MPI_Request_get_status(req, &flag, &st);
    int flag2 = 0;
    while (!flag2) MPI_Test(&req, &flag2, &st);
    SAY("probe + irecv + get_status + test: flags %d %d tag %d data ok %d", flag, flag2, st.MPI_TAG,
        same(buf, 3, 1049));
    CHECK(same(buf, 3, 1049));

    /* MPI_Probe, then a persistent receive created after the probe, started, observed with
       MPI_Request_get_status and completed by MPI_Waitany in an array with MPI_REQUEST_NULL. */
    MPI_Probe(1, 52, comm, &st);
    MPI_Request arr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Recv_init(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &arr[1]);
    memset(buf, 0, sizeof buf);
    MPI_Start(&arr[1]);
    flag = 0;
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
    /* MPICH 4.2.1's MPI_Request_get_status leaves a completed persistent request inactive: the
       MPI_Waitany after it natively gives MPI_UNDEFINED and an empty status (tsmpi's probe
       policy, which starts this receive itself, gives the standard's index 1). */
    flag = 1;
#endif
    while (!flag) MPI_Request_get_status(arr[1], &flag, &st);
    int index = -1;
    MPI_Waitany(2, arr, &index, &st);
    SAY("probe + start(recv_init any/any) + get_status + waitany: index %d tag %d data ok %d",
        index, st.MPI_TAG, same(buf, 3, 1052));
    CHECK(same(buf, 3, 1052));
    /* Again with MPI_Testsome, then with MPI_Cancel (too late: the message is matched). */
    MPI_Probe(1, 53, comm, &st);
    memset(buf, 0, sizeof buf);
    MPI_Start(&arr[1]);
    int outcount = 0, indices[2];
    MPI_Status sts2[2];
    while (outcount == 0) MPI_Testsome(2, arr, &outcount, indices, sts2);
    SAY("probe + start + testsome: outcount %d index %d tag %d data ok %d", outcount, indices[0],
        sts2[0].MPI_TAG, same(buf, 3, 1053));
    CHECK(same(buf, 3, 1053));
    MPI_Probe(1, 54, comm, &st);
    memset(buf, 0, sizeof buf);
    MPI_Start(&arr[1]);
    MPI_Cancel(&arr[1]);
    MPI_Wait(&arr[1], &st);
    MPI_Test_cancelled(&st, &cancelled);
    SAY("probe + start + cancel: cancelled %d tag %d data ok %d request kept %d", cancelled,
        st.MPI_TAG, same(buf, 3, 1054), arr[1] != MPI_REQUEST_NULL);
    CHECK(!cancelled && same(buf, 3, 1054));
    MPI_Request_free(&arr[1]);

    /* MPI_Probe, then MPI_Mprobe (blocking) of the same message, MPI_Imrecv. */
    MPI_Probe(1, 55, comm, &st);
    MPI_Mprobe(1, 55, comm, &msg, &st);
    memset(buf, 0, sizeof buf);
    MPI_Imrecv(buf, 64, MPI_INT, &msg, &req);
    MPI_Wait(&req, &st);
    SAY("probe + mprobe + imrecv: tag %d data ok %d", st.MPI_TAG, same(buf, 3, 1055));
    CHECK(same(buf, 3, 1055));
  } else if (rank == 1) {
    send_to0(3, 1040, 40);
    send_to0(3, 1041, 41);
    send_to0(3, 1141, 41);
    send_to0(3, 1241, 41);
    send_to0(3, 1042, 42);
    send_to0(3, 1043, 43);
    int got = 0;
    MPI_Recv(&got, 1, MPI_INT, 0, 143, comm, MPI_STATUS_IGNORE);
    send_to0(3, 1044, 44);
    int got2[3] = {0, 0, 0};
    MPI_Recv(got2, 3, MPI_INT, 0, 144, comm, MPI_STATUS_IGNORE);
    SAY("received from the sendrecvs: %d, %d %d %d", got, got2[0], got2[1], got2[2]);
    CHECK(got == 43 && same(got2, 3, 44));
    send_to0(3, 1045, 45);
    send_to0(3, 1046, 46);
    send_to0(3, 1047, 47);
    send_to0(3, 1048, 48);
    send_to0(3, 1049, 49);
    for (int tag = 52; tag <= 55; ++tag) send_to0(3, 1000 + tag, tag);
  }
  MPI_Barrier(comm);

  /* Two senders, one tag: a wildcard probe finds one of the two messages (which one depends on
     timing); a receive naming the other sender gets the other one, then a receive naming the
     probed sender gets the probed one. Then the same with wildcard receives after the probe. */
  if (rank == 0) {
    for (int variant = 0; variant < 2; ++variant) {
      int tag = 60 + variant;
      MPI_Probe(MPI_ANY_SOURCE, tag, comm, &st);
      int probed = st.MPI_SOURCE, other = 3 - probed, ok = 1;
      int in1[8], in2[8];
      memset(in1, 0, sizeof in1);
      memset(in2, 0, sizeof in2);
      if (variant == 0) {
        MPI_Recv(in1, 8, MPI_INT, other, tag, comm, &st);
        ok &= st.MPI_SOURCE == other && same(in1, 3, 100 * other + tag);
        MPI_Recv(in2, 8, MPI_INT, probed, tag, comm, &st);
        ok &= st.MPI_SOURCE == probed && same(in2, 3, 100 * probed + tag);
      } else {
        /* Which message a wildcard receive gets need not be the probed one (Open MPI keeps a
           queue per sender): only that both arrive intact is checked. */
        MPI_Recv(in1, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        int first = st.MPI_SOURCE;
        ok &= same(in1, 3, 100 * first + tag);
        MPI_Recv(in2, 8, MPI_INT, MPI_ANY_SOURCE, tag, comm, &st);
        ok &= st.MPI_SOURCE == 3 - first && same(in2, 3, 100 * st.MPI_SOURCE + tag);
      }
      SAY("two senders, wildcard probe, then %s: ok %d",
          variant ? "wildcard receives" : "receives naming the other sender first", ok);
      CHECK(ok);
    }
  } else {
    send_to0(3, 100 * rank + 60, 60);
    send_to0(3, 100 * rank + 61, 61);
  }
  return cov_finish();
}
