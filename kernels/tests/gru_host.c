/* cmx_gru_s8 on the build machine (tests/lower/test_gru_kernel.py): reads one case (cmx_gru_params'
 * words, each gate's multipliers, weights and effective biases, then the int8 input) from the file
 * named on the command line and writes the int8 output to stdout, so the test compares it with
 * kernel_models.gru_s8 byte for byte. CMSIS-NN's plain C path, compiled with the host's cc. */
#include <stdio.h>
#include <stdlib.h>
#include "cmx_nn.h"
static int32_t rd(FILE* f){int32_t v; fread(&v,4,1,f); return v;}
static void* rdbuf(FILE* f, size_t n){void* p=malloc(n); fread(p,1,n,f); return p;}
static void gate(FILE* f, cmx_gru_gate* g, int I, int H){
  g->input_multiplier=rd(f); g->input_shift=rd(f); g->input_weights=rdbuf(f,(size_t)H*I); g->input_bias=rdbuf(f,4*H);
  g->hidden_multiplier=rd(f); g->hidden_shift=rd(f); g->hidden_weights=rdbuf(f,(size_t)H*H); g->hidden_bias=rdbuf(f,4*H);
}
int main(int argc,char**argv){
  FILE* f=fopen(argv[1],"rb"); cmx_gru_params p;
  p.time_major=rd(f); p.batch_size=rd(f); p.time_steps=rd(f); p.input_size=rd(f); p.hidden_size=rd(f); p.reverse=rd(f);
  p.hidden_offset=rd(f); p.output_offset=rd(f); p.reset_multiplier=rd(f); p.reset_shift=rd(f);
  p.hidden_q15_multiplier=rd(f); p.hidden_q15_shift=rd(f); p.output_multiplier=rd(f); p.output_shift=rd(f);
  gate(f,&p.reset,p.input_size,p.hidden_size); gate(f,&p.update,p.input_size,p.hidden_size); gate(f,&p.candidate,p.input_size,p.hidden_size);
  size_t n=(size_t)p.batch_size*p.time_steps; int8_t* x=rdbuf(f,n*p.input_size); int8_t* y=malloc(n*p.hidden_size);
  void* scratch=malloc(16 * (size_t)p.hidden_size + 16);
  cmx_gru_s8(x,y,&p,scratch); fwrite(y,1,n*p.hidden_size,stdout); return 0;
}
