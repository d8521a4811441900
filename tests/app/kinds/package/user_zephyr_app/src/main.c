/* The team's application: check the model on this board at boot, then classify. */
#include <stdio.h>

#include "cmx.h"
#include "cmx_models.h"

int main(void)
{
	double err = -1.0;
	cmx_status st = cmx_init(&cmx_model_digits);

	if (st == CMX_OK) {
		st = cmx_self_test(&cmx_model_digits, &err);
	}
	printf("vibration-monitor: model %s %s (%.3f LSB)\n", cmx_name(&cmx_model_digits),
	       st == CMX_OK ? "PASS" : cmx_status_name(st), err);
	return st == CMX_OK ? 0 : 1;
}
