/* The team's application: bring the model up, check it on this target, report over semihosting. */
#include <stdint.h>

#include "cmx.h"
#include "cmx_models.h"

static void sh_call(int op, const void* arg) {
  register int r0 __asm("r0") = op;
  register const void* r1 __asm("r1") = arg;
  __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

static void say(const char* text) { sh_call(0x04, text); }

static void say_u(uint32_t v) {
  char buf[12];
  int n = 11;
  buf[n] = 0;
  do {
    buf[--n] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v && n);
  say(&buf[n]);
}

int main(void) {
  cmx_model* models[CMX_NUM_MODELS] = {CMX_MODEL_LIST};
  int failed = 0;
  for (uint32_t k = 0; k < CMX_NUM_MODELS; ++k) {
    double err = -1.0;
    cmx_status st = cmx_init(models[k]);
    if (st == CMX_OK) st = cmx_self_test(models[k], &err);
    say("sensor-firmware: ");
    say(cmx_name(models[k]));
    say(st == CMX_OK ? " PASS" : " FAIL ");
    if (st != CMX_OK) say(cmx_status_name(st));
    say(" err_milli_lsb=");
    say_u(err < 0 ? 0xFFFFFFFFu : (uint32_t)(err * 1000.0));
    say("\n");
    failed |= st != CMX_OK;
  }
  return failed;
}
