// The block index: Sets x Ways entries held in one two-port SRAM per way.
//
// A lookup reads every way of one set in parallel; the words arrive ReadLatency cycles
// later. A write updates one way of one set. The index does not interpret entries except
// for one contract with its user: an all-zero word is an invalid entry. After reset it
// sweeps every set once, writing zeros into all ways (Sets cycles), and only then raises
// ready_o; no read or write may be issued before that.
`include "kvdp_assert.svh"

module kvdp_index #(
  parameter int unsigned Sets = 256,
  parameter int unsigned Ways = 4,
  parameter int unsigned EntryBits = 64,
  parameter int unsigned ReadLatency = 1,
  localparam int unsigned SetBits = $clog2(Sets),
  localparam int unsigned WayBits = (Ways > 1) ? $clog2(Ways) : 1
) (
  input  logic                           clk_i,
  input  logic                           rst_ni,
  output logic                           ready_o,
  // lookup: all ways of rd_set_i, valid ReadLatency cycles after rd_en_i
  input  logic                           rd_en_i,
  input  logic [SetBits-1:0]             rd_set_i,
  output logic [Ways-1:0][EntryBits-1:0] rd_entries_o,
  // update: one way of one set
  input  logic                           wr_en_i,
  input  logic [SetBits-1:0]             wr_set_i,
  input  logic [WayBits-1:0]             wr_way_i,
  input  logic [EntryBits-1:0]           wr_entry_i
);

  logic init_busy_d, init_busy_q;
  logic [SetBits-1:0] init_set_d, init_set_q;

  always_comb begin
    init_busy_d = init_busy_q;
    init_set_d = init_set_q;
    if (init_busy_q) begin
      init_set_d = init_set_q + SetBits'(1);
      if (init_set_q == SetBits'(Sets - 1)) begin
        init_busy_d = 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      init_busy_q <= 1'b1;
      init_set_q <= '0;
    end else begin
      init_busy_q <= init_busy_d;
      init_set_q <= init_set_d;
    end
  end

  assign ready_o = !init_busy_q;

  for (genvar way = 0; way < Ways; way++) begin : g_way
    logic we;
    logic [SetBits-1:0] waddr;
    logic [EntryBits-1:0] wdata;

    always_comb begin
      we = wr_en_i && (32'(wr_way_i) == way);
      waddr = wr_set_i;
      wdata = wr_entry_i;
      if (init_busy_q) begin
        we = 1'b1;
        waddr = init_set_q;
        wdata = '0;
      end
    end

    kvdp_sram #(
      .Depth(Sets),
      .Width(EntryBits),
      .ReadLatency(ReadLatency)
    ) u_sram (
      .clk_i(clk_i),
      .rst_ni(rst_ni),
      .re_i(rd_en_i),
      .raddr_i(rd_set_i),
      .rdata_o(rd_entries_o[way]),
      .we_i(we),
      .waddr_i(waddr),
      .wdata_i(wdata)
    );
  end

  `KVDP_ASSERT_INIT(IndexSetsPowerOfTwo, (Sets >= 2) && ((Sets & (Sets - 1)) == 0))
  `KVDP_ASSERT_INIT(IndexWaysAtLeastOne, Ways >= 1)
  `KVDP_ASSERT(IndexNoAccessDuringInit, init_busy_q |-> !(rd_en_i || wr_en_i))
  `KVDP_ASSERT(IndexWayInRange, wr_en_i |-> (32'(wr_way_i) < Ways))

endmodule
