/* cmx_gru_s8 on the build machine (tests/lower/test_gru_kernel.py): reads one case (cmx_gru_params'
 * words, each gate's multipliers, weights and effective biases, then the int8 input) from the file
 * named on the command line and writes the int8 output to stdout, so the test compares it with
 * kernel_models.gru_s8 byte for byte. CMSIS-NN's plain C path, compiled with the host's cc. */
#include <stdio.h>
#include <stdlib.h>
#include "case_io.h"
#include "cmx_nn.h"
static void gate(FILE* f, cmx_gru_gate* g, int I, int H){
  g->input_multiplier=case_word(f); g->input_shift=case_word(f); g->input_weights=case_block(f,(size_t)H*I); g->input_bias=case_block(f,4*H);
  g->hidden_multiplier=case_word(f); g->hidden_shift=case_word(f); g->hidden_weights=case_block(f,(size_t)H*H); g->hidden_bias=case_block(f,4*H);
}
int main(int argc,char**argv){
  FILE* f=fopen(argv[1],"rb"); cmx_gru_params p;
  p.time_major=case_word(f); p.batch_size=case_word(f); p.time_steps=case_word(f); p.input_size=case_word(f); p.hidden_size=case_word(f); p.reverse=case_word(f);
  p.hidden_offset=case_word(f); p.output_offset=case_word(f); p.reset_multiplier=case_word(f); p.reset_shift=case_word(f);
  p.hidden_q15_multiplier=case_word(f); p.hidden_q15_shift=case_word(f); p.output_multiplier=case_word(f); p.output_shift=case_word(f);
  gate(f,&p.reset,p.input_size,p.hidden_size); gate(f,&p.update,p.input_size,p.hidden_size); gate(f,&p.candidate,p.input_size,p.hidden_size);
  size_t n=(size_t)p.batch_size*p.time_steps; int8_t* x=case_block(f,n*p.input_size); int8_t* y=malloc(n*p.hidden_size);
  void* scratch=malloc(16 * (size_t)p.hidden_size + 16);
  if(cmx_gru_s8(x,y,&p,scratch)!=ARM_CMSIS_NN_SUCCESS) return 4; fwrite(y,1,n*p.hidden_size,stdout); return 0;
}
