// Completion queue: a reorder buffer that releases completions in descriptor order.
//
// The lookup stage allocates the tail entry at commit, with status, flags, bursts and the
// accepted / lookup-done stamps already known. An entry without a transfer is done at once;
// one with a transfer becomes done when the DMA generator retires it (its
// ts_transfer_done is stamped then). The head leaves on cpl_valid_o / cpl_ready_i once done.
`include "kvdp_assert.svh"

module kvdp_cpl_queue
  import kvdp_cmdset_pkg::*;
#(
  parameter int unsigned Depth = 16,
  localparam int unsigned IdxBits = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned CountBits = $clog2(Depth + 1)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic [63:0]          cycle_i,
  // allocation at commit
  input  logic                 alloc_i,
  input  completion_t          alloc_rec_i,
  input  logic                 alloc_done_i,
  output logic [IdxBits-1:0]   alloc_idx_o,
  output logic [31:0]          free_o,
  output logic [CountBits-1:0] count_o,
  // transfer retirement
  input  logic                 retire_i,
  input  logic [IdxBits-1:0]   retire_idx_i,
  // completions to the host side
  output logic                 cpl_valid_o,
  input  logic                 cpl_ready_i,
  output completion_t          cpl_o
);

  completion_t rec_q [Depth];
  logic [Depth-1:0] done_d, done_q;
  logic [IdxBits-1:0] head_d, head_q;
  logic [IdxBits-1:0] tail_d, tail_q;
  logic [CountBits-1:0] count_d, count_q;
  logic pop;

  function automatic logic [IdxBits-1:0] idx_next(logic [IdxBits-1:0] idx);
    return (idx == IdxBits'(Depth - 1)) ? '0 : idx + IdxBits'(1);
  endfunction

  assign cpl_valid_o = (count_q != '0) && done_q[head_q];
  assign pop = cpl_valid_o && cpl_ready_i;

  always_comb begin
    done_d = done_q;
    head_d = head_q;
    tail_d = tail_q;
    count_d = count_q;
    if (alloc_i) begin
      done_d[tail_q] = alloc_done_i;
      tail_d = idx_next(tail_q);
    end
    if (retire_i) begin
      done_d[retire_idx_i] = 1'b1;
    end
    if (pop) begin
      done_d[head_q] = 1'b0;
      head_d = idx_next(head_q);
    end
    if (alloc_i && !pop) begin
      count_d = count_q + CountBits'(1);
    end else if (pop && !alloc_i) begin
      count_d = count_q - CountBits'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      done_q <= '0;
      head_q <= '0;
      tail_q <= '0;
      count_q <= '0;
    end else begin
      done_q <= done_d;
      head_q <= head_d;
      tail_q <= tail_d;
      count_q <= count_d;
    end
  end

  // Records: no reset, qualified by the head/tail window. Indexed writes: the allocation
  // fills the tail entry, a retirement stamps its entry's ts_transfer_done (never the tail
  // entry of the same cycle: a retirement targets an occupied entry, CplRetireOnce).
  always_ff @(posedge clk_i) begin
    if (alloc_i) begin
      rec_q[tail_q] <= alloc_rec_i;
    end
    if (retire_i) begin
      rec_q[retire_idx_i].ts_transfer_done <= cycle_i;
    end
  end

  assign cpl_o = rec_q[head_q];
  assign alloc_idx_o = tail_q;
  assign free_o = 32'(Depth) - 32'(count_q);
  assign count_o = count_q;

  // Is idx inside the occupied window [head, head + count)?
  function automatic logic occupied(logic [IdxBits-1:0] idx);
    logic [31:0] offset;
    offset = (idx >= head_q) ? 32'(idx) - 32'(head_q) : 32'(idx) + 32'(Depth) - 32'(head_q);
    return offset < 32'(count_q);
  endfunction

  `KVDP_ASSERT(CplNoOverflow, alloc_i |-> (count_q != CountBits'(Depth)))
  `KVDP_ASSERT(CplNoUnderflow, pop |-> (count_q != '0))
  // A transfer retires exactly once, into an allocated entry still waiting for it.
  `KVDP_ASSERT(CplRetireOnce, retire_i |-> (occupied(retire_idx_i) && !done_q[retire_idx_i]))

endmodule
