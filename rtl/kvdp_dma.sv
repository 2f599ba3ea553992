// DMA command generator: splits each transfer into runs of bursts, tracks outstanding transfers
// and retires them when all their bursts are reported done.
//
// Transfers wait in a FIFO in descriptor order. The head is started when the splitter is
// idle, a tracker slot is free (at most MaxOutstanding transfers in flight) and no
// outstanding transfer has the same key (a transfer for a block waits for the one before it;
// the head blocks every later transfer, so bursts leave in descriptor order). The slot index
// is the bursts' id on the DMA port. A transfer of L bytes is ceil(L / MaxBurstBytes) bursts in
// address order, all MaxBurstBytes long except possibly the last.
//
// Burst port (valid/ready): one handshake hands over a run of up to MaxRunBursts consecutive
// bursts of one transfer: dma_req_bursts_o bursts starting at the run's addresses, covering
// dma_req_length_o bytes, each burst MaxBurstBytes long except the transfer's last. The DMA
// datapath behind the port takes the run's bursts one by one, as a command of several beats
// on an AXI-like bus does; a run costs one handshake instead of one per burst. A transfer
// leaves as ceil(bursts / MaxRunBursts) runs, all full but the last; dma_req_last_o marks the
// run that ends the transfer. dma_req_* holds steady while valid and not ready.
// Done port: pulses of dma_done_valid_i with the id the bursts carried and dma_done_bursts_i,
// the number of that id's bursts finished since its last pulse (at least one, at most the
// bursts handed over and not yet reported), any cycle after their handshake, in any order
// across ids; it is always accepted. A neighbour may report each burst alone or gather a
// transfer's bursts into one pulse. When a slot's last burst is done, retire_o pulses with
// the transfer's completion-queue index.
`include "kvdp_assert.svh"

module kvdp_dma
  import kvdp_pkg::*;
#(
  parameter int unsigned QueueDepth = 8,
  parameter int unsigned MaxBurstBytes = 4096,
  parameter int unsigned MaxOutstanding = 4,
  parameter int unsigned MaxRunBursts = 1,  // bursts per handshake on the burst port, >= 1
  parameter int unsigned CplIdxBits = 4,
  localparam int unsigned IdBits = (MaxOutstanding > 1) ? $clog2(MaxOutstanding) : 1,
  localparam int unsigned QueueCountBits = $clog2(QueueDepth + 1),
  localparam int unsigned SlotCountBits = $clog2(MaxOutstanding + 1)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // transfers from the lookup pipeline
  input  logic                      xfer_push_i,
  input  xfer_req_t                 xfer_i,
  input  logic [CplIdxBits-1:0]     xfer_cpl_idx_i,
  output logic [31:0]               xfer_free_o,
  output logic                      xfer_empty_o,
  // burst commands
  output logic                      dma_req_valid_o,
  input  logic                      dma_req_ready_i,
  output logic [IdBits-1:0]         dma_req_id_o,
  output dma_dir_e                  dma_req_dir_o,
  output logic [63:0]               dma_req_src_addr_o,
  output logic [63:0]               dma_req_dst_addr_o,
  output logic [31:0]               dma_req_length_o,
  output logic [31:0]               dma_req_bursts_o,
  output logic [63:0]               dma_req_key_o,
  output logic                      dma_req_last_o,
  // burst completions
  input  logic                      dma_done_valid_i,
  input  logic [IdBits-1:0]         dma_done_id_i,
  input  logic [31:0]               dma_done_bursts_i,
  // retirement towards the completion queue
  output logic                      retire_o,
  output logic [CplIdxBits-1:0]     retire_cpl_idx_o,
  output logic [SlotCountBits-1:0]  outstanding_o,
  // the head transfer starts at the coming edge (for the engine's active_o)
  output logic                      start_o
);

  localparam int unsigned QueueWidth = $bits(xfer_req_t) + CplIdxBits;
  localparam int unsigned BurstShift = $clog2(MaxBurstBytes);
  // Bytes of a full run. Transfer lengths are 32-bit, so a run of 2^32 bytes or more would
  // never be full: the parameter check below keeps the product in range.
  localparam longint unsigned RunBytesWide = longint'(MaxRunBursts) * longint'(MaxBurstBytes);
  localparam logic [31:0] RunBytes = 32'(RunBytesWide);

  typedef struct packed {
    xfer_req_t xfer;
    logic [CplIdxBits-1:0] cpl_idx;
  } queued_xfer_t;

  // ---------------------------------------------------------------------------------------
  // Transfer queue
  // ---------------------------------------------------------------------------------------
  queued_xfer_t head;
  logic [QueueWidth-1:0] head_bits;
  logic queue_empty, queue_full, queue_pop;
  logic [QueueCountBits-1:0] queue_count;

  kvdp_fifo #(
    .Width(QueueWidth),
    .Depth(QueueDepth)
  ) u_queue (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .push_i(xfer_push_i),
    .data_i(QueueWidth'({xfer_i, xfer_cpl_idx_i})),
    .full_o(queue_full),
    .pop_i(queue_pop),
    .data_o(head_bits),
    .empty_o(queue_empty),
    .count_o(queue_count)
  );

  assign head = queued_xfer_t'(head_bits);
  assign xfer_free_o = 32'(QueueDepth) - 32'(queue_count);
  assign xfer_empty_o = queue_empty;

  // ---------------------------------------------------------------------------------------
  // Tracker slots and burst splitter
  // ---------------------------------------------------------------------------------------
  logic [MaxOutstanding-1:0] slot_valid_d, slot_valid_q;
  logic [63:0] slot_key_q [MaxOutstanding];
  logic [CplIdxBits-1:0] slot_cpl_idx_q [MaxOutstanding];
  logic [31:0] slot_bursts_q [MaxOutstanding];  // bursts of the whole transfer
  logic [31:0] slot_issued_q [MaxOutstanding];  // bursts handed to the DMA port so far
  logic [31:0] slot_done_q [MaxOutstanding];  // bursts reported done so far

  logic split_busy_d, split_busy_q;
  logic [IdBits-1:0] split_slot_d, split_slot_q;
  dma_dir_e split_dir_d, split_dir_q;
  logic [63:0] split_key_d, split_key_q;
  logic [63:0] split_src_d, split_src_q;
  logic [63:0] split_dst_d, split_dst_q;
  logic [31:0] split_left_d, split_left_q;  // bytes not yet issued

  logic [31:0] run_length, run_bursts;
  logic run_last;
  logic [IdBits-1:0] free_slot;
  logic has_free_slot, key_busy, start;
  logic handshake, done_last;
  logic [SlotCountBits-1:0] outstanding;

  always_comb begin
    run_last = (split_left_q <= RunBytes);
    run_length = run_last ? split_left_q : RunBytes;
    run_bursts = 32'(({1'b0, run_length} + 33'(MaxBurstBytes - 1)) >> BurstShift);

    free_slot = '0;
    has_free_slot = 1'b0;
    key_busy = 1'b0;
    outstanding = '0;
    for (int slot = int'(MaxOutstanding) - 1; slot >= 0; slot--) begin
      if (!slot_valid_q[slot]) begin
        free_slot = IdBits'(slot);
        has_free_slot = 1'b1;
      end else begin
        outstanding = outstanding + SlotCountBits'(1);
        if (slot_key_q[slot] == head.xfer.key) begin
          key_busy = 1'b1;
        end
      end
    end
    start = !split_busy_q && !queue_empty && has_free_slot && !key_busy;
  end

  assign handshake = split_busy_q && dma_req_ready_i;
  // The done pulse completes its slot's transfer: that slot's count reaches its burst count.
  assign done_last = dma_done_valid_i
                  && ((slot_done_q[dma_done_id_i] + dma_done_bursts_i)
                      == slot_bursts_q[dma_done_id_i]);

  always_comb begin
    slot_valid_d = slot_valid_q;
    split_busy_d = split_busy_q;
    split_slot_d = split_slot_q;
    split_dir_d = split_dir_q;
    split_key_d = split_key_q;
    split_src_d = split_src_q;
    split_dst_d = split_dst_q;
    split_left_d = split_left_q;
    queue_pop = 1'b0;
    retire_o = 1'b0;
    retire_cpl_idx_o = '0;

    // One run of bursts per handshake.
    if (handshake) begin
      split_src_d = split_src_q + 64'(run_length);
      split_dst_d = split_dst_q + 64'(run_length);
      split_left_d = split_left_q - run_length;
      if (run_last) begin
        split_busy_d = 1'b0;
      end
    end

    // Start the head transfer on an idle splitter.
    if (start) begin
      queue_pop = 1'b1;
      slot_valid_d[free_slot] = 1'b1;
      split_busy_d = 1'b1;
      split_slot_d = free_slot;
      split_dir_d = head.xfer.dir;
      split_key_d = head.xfer.key;
      split_src_d = head.xfer.src_addr;
      split_dst_d = head.xfer.dst_addr;
      split_left_d = head.xfer.length;
    end

    // The last done burst retires the transfer and frees its slot.
    if (done_last) begin
      slot_valid_d[dma_done_id_i] = 1'b0;
      retire_o = 1'b1;
      retire_cpl_idx_o = slot_cpl_idx_q[dma_done_id_i];
    end
  end

  // Slot payload: indexed writes, no reset, qualified by slot_valid_q. A start fills the
  // free slot; a handshake counts the run's bursts as issued on the splitter's slot (never in
  // the same cycle as a start: a start needs an idle splitter); a done pulse counts its bursts
  // on a valid slot (never the free slot a start takes, DmaDoneIdValid).
  always_ff @(posedge clk_i) begin
    if (start) begin
      slot_key_q[free_slot] <= head.xfer.key;
      slot_cpl_idx_q[free_slot] <= head.cpl_idx;
      slot_bursts_q[free_slot] <= head.xfer.bursts;
      slot_issued_q[free_slot] <= '0;
      slot_done_q[free_slot] <= '0;
    end
    if (handshake) begin
      slot_issued_q[split_slot_q] <= slot_issued_q[split_slot_q] + run_bursts;
    end
    if (dma_done_valid_i) begin
      slot_done_q[dma_done_id_i] <= slot_done_q[dma_done_id_i] + dma_done_bursts_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      slot_valid_q <= '0;
      split_busy_q <= 1'b0;
    end else begin
      slot_valid_q <= slot_valid_d;
      split_busy_q <= split_busy_d;
    end
  end

  // Splitter payload: no reset, qualified by split_busy_q.
  always_ff @(posedge clk_i) begin
    split_slot_q <= split_slot_d;
    split_dir_q <= split_dir_d;
    split_key_q <= split_key_d;
    split_src_q <= split_src_d;
    split_dst_q <= split_dst_d;
    split_left_q <= split_left_d;
  end

  assign dma_req_valid_o = split_busy_q;
  assign dma_req_id_o = split_slot_q;
  assign dma_req_dir_o = split_dir_q;
  assign dma_req_key_o = split_key_q;
  assign dma_req_src_addr_o = split_src_q;
  assign dma_req_dst_addr_o = split_dst_q;
  assign dma_req_length_o = run_length;
  assign dma_req_bursts_o = run_bursts;
  assign dma_req_last_o = run_last;
  assign outstanding_o = outstanding;
  assign start_o = start;

  // ---------------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------------
`ifndef KVDP_NO_ASSERT
  // Array reads for the checks are taken here: Verilator 5.006 cannot select from an
  // unpacked array inside a concurrent property.
  logic duplicate_key, done_id_valid, done_after_issue;
  always_comb begin
    done_id_valid = (32'(dma_done_id_i) < MaxOutstanding) && slot_valid_q[dma_done_id_i];
    // 33 bits: a count near 2^32 must not wrap into range.
    done_after_issue = ({1'b0, slot_done_q[dma_done_id_i]} + {1'b0, dma_done_bursts_i})
                       <= {1'b0, slot_issued_q[dma_done_id_i]};
    duplicate_key = 1'b0;
    for (int unsigned a = 0; a < MaxOutstanding; a++) begin
      for (int unsigned b = a + 1; b < MaxOutstanding; b++) begin
        if (slot_valid_q[a] && slot_valid_q[b] && (slot_key_q[a] == slot_key_q[b])) begin
          duplicate_key = 1'b1;
        end
      end
    end
  end

`else
  // Only the checks read the queue's full flag.
  logic unused_queue_full;
  assign unused_queue_full = queue_full;
`endif

  `KVDP_ASSERT_INIT(DmaOutstandingAtLeastOne, MaxOutstanding >= 1)
  `KVDP_ASSERT_INIT(DmaRunBursts, (MaxRunBursts >= 1) && (RunBytesWide < 64'h8000_0000))
  `KVDP_ASSERT(DmaNoQueueOverflow, xfer_push_i |-> !queue_full)
  `KVDP_ASSERT(DmaNoEmptyTransfer, xfer_push_i |-> ((xfer_i.length != '0) && (xfer_i.bursts != '0)))
  // No two outstanding transfers for one block.
  `KVDP_ASSERT(DmaOneTransferPerKey, !duplicate_key)
  `KVDP_ASSERT(DmaDoneIdValid, dma_done_valid_i |-> done_id_valid)
  // A pulse reports at least one burst, and no more than were handed over and not yet reported.
  `KVDP_ASSERT(DmaDoneAfterIssue, dma_done_valid_i |-> ((dma_done_bursts_i != '0) && done_after_issue))
  // A run is 1 to MaxRunBursts bursts, and its length fits them: every burst but the last full,
  // the last one not empty.
  `KVDP_ASSERT(DmaBurstLength, dma_req_valid_o
                               |-> ((dma_req_bursts_o != '0)
                                    && (dma_req_bursts_o <= 32'(MaxRunBursts))
                                    && ((64'(dma_req_bursts_o) - 64'd1) * 64'(MaxBurstBytes)
                                        < 64'(dma_req_length_o))
                                    && (64'(dma_req_length_o)
                                        <= 64'(dma_req_bursts_o) * 64'(MaxBurstBytes))))

endmodule
