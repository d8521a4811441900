/*
 * cmx_check_main.c - main() of the on-target check image: run the model once on its reference
 * input, print the result line, stop with its verdict. The user's application (user/main.c on bare
 * metal, src/main.c on Zephyr) is a separate image with its own main().
 */
#include "cmx_platform.h"

int main(void)
{
	cmx_platform_exit(cmx_run());
}
