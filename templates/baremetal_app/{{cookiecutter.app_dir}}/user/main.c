{%- set handle = cookiecutter.models | map(attribute="handle") | join(", ") -%}
/*
 * Your application: created once by cmx-gen, then yours. `cmx-gen regen` never touches it; the
 * names it calls (cmx.h, cmx_app.h, the handle {{ handle }} in cmx_models.h) stay the same.
 *
 * It runs the model in a loop through the model API (docs/api.md in cmx-gen): get an input, run,
 * print the output and the {{ "instructions" if cookiecutter.board.qemu else "cycles" }} of the call. Put your sensor code in get_input().
 * Built as build/{{ cookiecutter.app_name | replace("-", "_") }}_app.elf by `cmx-gen build`; `cmx-gen run . --app` runs it.
 */
#include <stdint.h>

#include "cmx.h"        /* the model API */
#include "cmx_app.h"    /* console, counter, host input, result lines */
#include "cmx_models.h" /* this app's model handle(s) */

/* Calls before main() returns; 0 = forever. CMake: -D CMX_APP_ITERATIONS=N (default 10, or 0 when
 * built stand-alone with CMX_SEMIHOSTING=OFF). Samples the host sends always run. */
#ifndef CMX_APP_ITERATIONS
#define CMX_APP_ITERATIONS 10
#endif

/* Fill the model's input(s) for one call. Replace the body with your sensor code: write into the
 * input buffer (zero-copy) or pass floats:
 *     cmx_tensor in;
 *     cmx_input(model, 0, &in);          // in.data, in.nbytes, in.shape, in.dtype
 *     cmx_input_set_f32(model, 0, my_samples, in.numel);
 * The default takes the bytes the host sends (`cmx-gen run . --data FILE`), else the reference
 * input cmx-gen embedded. */
static cmx_app_input get_input(cmx_model* model, uint32_t call)
{
	(void)call;
	return cmx_app_default_input(model);
}

int main(void)
{
	/* Your model(s), in the order they run: {{ handle }}. */
	cmx_model *models[CMX_NUM_MODELS] = {CMX_MODEL_LIST};

	if (cmx_app_init() != 0) {
		return 1;
	}
	for (uint32_t k = 0; k < CMX_NUM_MODELS; ++k) {
		cmx_status status = cmx_init(models[k]);
		if (status != CMX_OK) {
			cmx_app_print_error(models[k], "init", status);
			return 1;
		}
	}
	uint32_t call = 0;
	for (int more = 1; more; call += more) {
		for (uint32_t k = 0; k < CMX_NUM_MODELS && more; ++k) {
			cmx_model *model = models[k];
			cmx_app_input input = get_input(model, call);
			if (input == CMX_APP_INPUT_END ||
			    (input == CMX_APP_INPUT_REFERENCE && CMX_APP_ITERATIONS != 0 && call >= CMX_APP_ITERATIONS)) {
				more = 0;
				break;
			}
			uint64_t start = cmx_app_counter();
			cmx_status status = cmx_invoke(model);
			uint64_t count = cmx_app_counter() - start;
			if (status != CMX_OK) {
				cmx_app_print_error(model, "invoke", status);
				return 1;
			}
			/* Read the outputs here, before {{ "the next input overwrites them" if cookiecutter.models | length == 1 else ("the next model runs (the models share one arena)" if cookiecutter.placement.arena_layout == "shared" else "the next input overwrites them") }}:
			 *     cmx_tensor out;  cmx_output(model, 0, &out);   or  cmx_output_get_f32(...) */
			cmx_app_print_call(model, call, input, count, call == 0 || input == CMX_APP_INPUT_HOST);
		}
	}
	cmx_app_print_done(call);
	return 0;
}
