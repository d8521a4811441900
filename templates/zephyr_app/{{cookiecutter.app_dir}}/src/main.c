/* {{ cookiecutter.app_name }}: run the model once and print the cmx-gen result line. */
#include "cmx_platform.h"

int main(void)
{
	cmx_platform_exit(cmx_run());
}
