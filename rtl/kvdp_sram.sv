// Two-port SRAM (one read port, one write port) with a configurable read latency.
//
// Behavioural stand-in for a compiler macro: the array write below is the macro's own
// storage. A read issued
// in cycle t returns the word in cycle t + ReadLatency (ReadLatency >= 1: the macro's output
// register, then ReadLatency - 1 pipeline registers). A read and a write of the same address
// in the same cycle is not allowed (asserted): callers resolve that hazard before the macro.
`include "kvdp_assert.svh"

module kvdp_sram #(
  parameter int unsigned Depth = 256,
  parameter int unsigned Width = 64,
  parameter int unsigned ReadLatency = 1,
  localparam int unsigned AddrBits = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                re_i,
  input  logic [AddrBits-1:0] raddr_i,
  output logic [Width-1:0]    rdata_o,
  input  logic                we_i,
  input  logic [AddrBits-1:0] waddr_i,
  input  logic [Width-1:0]    wdata_i
);

  // mem_q is the macro's storage. A co-simulation reads it in zero time through Verilator's
  // public access (cosim/kvdp_cosim.vlt), not through a port of the design.
  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] rdata_q [ReadLatency];

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem_q[waddr_i] <= wdata_i;
    end
  end

  // Read data path: no reset, a read result is only consumed with its request's valid bit.
  // The output register holds its word until the next read; the pipeline registers behind
  // it shift every cycle.
  always_ff @(posedge clk_i) begin
    if (re_i) begin
      rdata_q[0] <= mem_q[raddr_i];
    end
    for (int unsigned stage = 1; stage < ReadLatency; stage++) begin
      rdata_q[stage] <= rdata_q[stage - 1];
    end
  end

  assign rdata_o = rdata_q[ReadLatency - 1];

  `KVDP_ASSERT_INIT(SramReadLatencyAtLeastOne, ReadLatency >= 1)
  `KVDP_ASSERT(SramNoReadWriteCollision, !(re_i && we_i && (raddr_i == waddr_i)))
  `KVDP_ASSERT(SramAddressInRange, (!re_i || (32'(raddr_i) < Depth)) && (!we_i || (32'(waddr_i) < Depth)))

`ifdef KVDP_NO_ASSERT
  // The reset only qualifies the assertions above.
  logic unused_rst_n;
  assign unused_rst_n = rst_ni;
`endif

endmodule
