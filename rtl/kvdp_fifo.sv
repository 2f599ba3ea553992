// Synchronous FIFO with a flop array, used for the descriptor intake and the transfer queue.
//
// push_i must not be raised while full_o, pop_i not while empty_o (both asserted). data_o
// shows the oldest entry whenever empty_o is low.
`include "kvdp_assert.svh"

module kvdp_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4,
  localparam int unsigned PtrBits = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned CountBits = $clog2(Depth + 1)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 push_i,
  input  logic [Width-1:0]     data_i,
  output logic                 full_o,
  input  logic                 pop_i,
  output logic [Width-1:0]     data_o,
  output logic                 empty_o,
  output logic [CountBits-1:0] count_o
);

  logic [Width-1:0] mem_q [Depth];
  logic [PtrBits-1:0] wr_ptr_d, wr_ptr_q;
  logic [PtrBits-1:0] rd_ptr_d, rd_ptr_q;
  logic [CountBits-1:0] count_d, count_q;

  function automatic logic [PtrBits-1:0] ptr_next(logic [PtrBits-1:0] ptr);
    return (ptr == PtrBits'(Depth - 1)) ? '0 : ptr + PtrBits'(1);
  endfunction

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    rd_ptr_d = rd_ptr_q;
    count_d = count_q;
    if (push_i) begin
      wr_ptr_d = ptr_next(wr_ptr_q);
    end
    if (pop_i) begin
      rd_ptr_d = ptr_next(rd_ptr_q);
    end
    if (push_i && !pop_i) begin
      count_d = count_q + CountBits'(1);
    end else if (pop_i && !push_i) begin
      count_d = count_q - CountBits'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
      count_q <= '0;
    end else begin
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
      count_q <= count_d;
    end
  end

  // Payload storage: one indexed write per push, no reset (only the pointers say what is
  // valid). Written as storage, not as a whole-array next-state copy, so a simulator touches
  // one entry per push instead of all Depth entries every cycle.
  always_ff @(posedge clk_i) begin
    if (push_i) begin
      mem_q[wr_ptr_q] <= data_i;
    end
  end

  assign data_o = mem_q[rd_ptr_q];
  assign full_o = (count_q == CountBits'(Depth));
  assign empty_o = (count_q == '0);
  assign count_o = count_q;

  `KVDP_ASSERT_INIT(FifoDepthAtLeastOne, Depth >= 1)
  `KVDP_ASSERT(FifoNoOverflow, push_i |-> !full_o)
  `KVDP_ASSERT(FifoNoUnderflow, pop_i |-> !empty_o)

endmodule
