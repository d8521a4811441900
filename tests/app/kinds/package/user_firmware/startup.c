/* The team's start-up code: vector table, .data/.bss, FPU on, C++ constructors, main, exit. */
#include <stdint.h>
#include <string.h>

extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__, __StackTop;
extern int main(void);
extern void __libc_init_array(void);

void _init(void) {}
void _fini(void) {}

static void sh_exit(int status) {
  register int r0 __asm("r0") = 0x18;
  register int r1 __asm("r1") = status == 0 ? 0x20026 : 0x20024; /* ApplicationExit : RunTimeErrorUnknown */
  __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  for (;;) {
  }
}

void Reset_Handler(void) {
#if (defined(__ARM_FP) && __ARM_FP) || defined(__ARM_FEATURE_MVE)
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10, CP11 */
  __asm volatile("dsb\n isb" ::: "memory");
#endif
  memcpy(&__data_start__, &__data_load__, (size_t)((uint8_t*)&__data_end__ - (uint8_t*)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((uint8_t*)&__bss_end__ - (uint8_t*)&__bss_start__));
  __libc_init_array();
  sh_exit(main());
}

void Fault_Handler(void) { sh_exit(3); }

__attribute__((section(".vectors"), used)) const void* const vectors[16] = {
    &__StackTop, (void*)Reset_Handler, (void*)Fault_Handler, (void*)Fault_Handler,
    (void*)Fault_Handler, (void*)Fault_Handler, (void*)Fault_Handler,
};
