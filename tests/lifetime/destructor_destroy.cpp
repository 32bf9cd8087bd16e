// fq objects destroyed from a C++ destructor that runs at exit or at thread exit, after an earlier call
// failed (so the thread's error message is set): a static object's destructor ("static"), a thread_local
// of the main thread ("thread_local") and a thread_local of another thread ("thread"). Each owner is
// constructed before the library's first call, so its destructor runs after anything the library sets up
// lazily would have been torn down. Every destroy of a live object must return SUCCESS, a second destroy
// INVALID_HANDLE, and the process must exit 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

#include "fusedquant/fusedquant.h"

namespace {

void expect(fqStatus_t got, fqStatus_t want, const char* what) {
    if (got == want) return;
    std::fprintf(stderr, "destructor_destroy: %s returned %s, expected %s (%s)\n", what, fqGetStatusString(got),
                 fqGetStatusString(want), fqGetLastErrorMessage());
    std::fflush(stderr);
    _exit(1);  // exit() while exiting is undefined
}

void fail_a_call() {
    fqTensorLayout_t bad = nullptr;
    expect(fqTensorLayoutCreate(&bad, FQ_TYPE_BF16, -1, 8, 8), FQ_STATUS_INVALID_VALUE, "a failing create");
}

bool g_expect_destroyed = false, g_destroyed = false;

// Constructed before (so destroyed after) every owner: an owner whose destructor never ran fails the test.
struct Verifier {
    ~Verifier() {
        if (g_expect_destroyed && !g_destroyed) {
            std::fprintf(stderr, "destructor_destroy: the owner's destructor did not run\n");
            _exit(1);
        }
    }
} g_verifier;

// Owns one object of each kind; its destructor destroys them and checks every status.
struct Owner {
    const char* where = "";
    bool armed = false;
    fqHandle_t handle = nullptr;
    fqQuantDesc_t desc = nullptr;
    fqTensorLayout_t layout = nullptr;
    fqGroupedGemmDesc_t gemm = nullptr;

    void create(const char* w) {
        where = w;
        expect(fqCreate(&handle, FQ_BACKEND_HOST, -1), FQ_STATUS_SUCCESS, "fqCreate");
        expect(fqQuantDescCreate(&desc), FQ_STATUS_SUCCESS, "fqQuantDescCreate");
        expect(fqTensorLayoutCreate(&layout, FQ_TYPE_BF16, 4, 8, 8), FQ_STATUS_SUCCESS, "fqTensorLayoutCreate");
        expect(fqGroupedGemmDescCreate(&gemm), FQ_STATUS_SUCCESS, "fqGroupedGemmDescCreate");
        fail_a_call();
        armed = true;
        g_expect_destroyed = true;
    }

    ~Owner() {
        if (!armed) return;
        fail_a_call();
        int32_t count = 0;
        expect(fqGetVariantCount(handle, &count), FQ_STATUS_SUCCESS, "fqGetVariantCount");
        expect(fqDestroy(handle), FQ_STATUS_SUCCESS, "fqDestroy");
        expect(fqQuantDescDestroy(desc), FQ_STATUS_SUCCESS, "fqQuantDescDestroy");
        expect(fqTensorLayoutDestroy(layout), FQ_STATUS_SUCCESS, "fqTensorLayoutDestroy");
        expect(fqGroupedGemmDescDestroy(gemm), FQ_STATUS_SUCCESS, "fqGroupedGemmDescDestroy");
        expect(fqQuantDescDestroy(desc), FQ_STATUS_INVALID_HANDLE, "a second fqQuantDescDestroy");
        if (!std::strstr(fqGetLastErrorMessage(), "desc")) {
            std::fprintf(stderr, "destructor_destroy: the message \"%s\" does not name desc\n", fqGetLastErrorMessage());
            _exit(1);
        }
        g_destroyed = true;
        std::printf("destructor_destroy: destroyed from a %s destructor\n", where);
        std::fflush(stdout);
    }
};

Owner g_static_owner;  // constructed before main, destroyed after main returns
thread_local Owner t_owner;

}  // namespace

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (!std::strcmp(mode, "static")) {
        g_static_owner.create("static");
    } else if (!std::strcmp(mode, "thread_local")) {
        t_owner.where = "";  // constructs the main thread's owner before the library's first call
        t_owner.create("main thread's thread_local");
    } else if (!std::strcmp(mode, "thread")) {
        std::thread([] {
            t_owner.where = "";
            t_owner.create("thread's thread_local");
        }).join();
        if (!g_destroyed) return 1;
    } else {
        std::fprintf(stderr, "usage: %s static|thread_local|thread\n", argv[0]);
        return 2;
    }
    return 0;
}
