/* A C program that destroys its fq objects from an atexit handler, after an earlier call failed (so the
 * thread's error message is set). Every destroy of a live object must return SUCCESS, a second destroy
 * INVALID_HANDLE with a message, and the process must exit 0: the library's state outlives the caller's
 * atexit handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fusedquant/fusedquant.h"

static fqHandle_t handle;
static fqQuantDesc_t desc;
static fqTensorLayout_t layout;

static void expect(fqStatus_t got, fqStatus_t want, const char* what) {
    if (got == want) return;
    fprintf(stderr, "atexit_destroy: %s returned %s, expected %s (%s)\n", what, fqGetStatusString(got),
            fqGetStatusString(want), fqGetLastErrorMessage());
    fflush(stderr);
    _exit(1); /* exit() from an atexit handler is undefined */
}

static void cleanup(void) {
    fqTensorLayout_t bad = NULL;
    expect(fqTensorLayoutCreate(&bad, FQ_TYPE_BF16, -1, 8, 8), FQ_STATUS_INVALID_VALUE, "a failing create at exit");
    expect(fqDestroy(handle), FQ_STATUS_SUCCESS, "fqDestroy");
    expect(fqQuantDescDestroy(desc), FQ_STATUS_SUCCESS, "fqQuantDescDestroy");
    expect(fqTensorLayoutDestroy(layout), FQ_STATUS_SUCCESS, "fqTensorLayoutDestroy");
    expect(fqDestroy(handle), FQ_STATUS_INVALID_HANDLE, "a second fqDestroy");
    if (strstr(fqGetLastErrorMessage(), "handle") == NULL) {
        fprintf(stderr, "atexit_destroy: the message \"%s\" does not name the handle\n", fqGetLastErrorMessage());
        _exit(1);
    }
    printf("atexit_destroy: destroyed from atexit\n");
    fflush(stdout);
}

int main(void) {
    fqTensorLayout_t bad = NULL;
    /* Registered before the library's first call, so that the handler runs after anything the library
     * might set up lazily has been torn down (were it torn down at exit). */
    if (atexit(cleanup) != 0) return 1;
    expect(fqCreate(&handle, FQ_BACKEND_HOST, -1), FQ_STATUS_SUCCESS, "fqCreate");
    expect(fqQuantDescCreate(&desc), FQ_STATUS_SUCCESS, "fqQuantDescCreate");
    expect(fqTensorLayoutCreate(&layout, FQ_TYPE_BF16, 4, 8, 8), FQ_STATUS_SUCCESS, "fqTensorLayoutCreate");
    /* A failing call, so that the thread's error message is set when the atexit handler runs. */
    expect(fqTensorLayoutCreate(&bad, FQ_TYPE_BF16, -1, 8, 8), FQ_STATUS_INVALID_VALUE, "a failing create");
    return 0;
}
