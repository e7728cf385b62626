// Scratch program (not a lesson): sustained throughput at the power limit.
// Phases run back to back, each about PHASE_S seconds: the lab's mma.sync
// chain ceiling kernel (mma_peak, sm_80 module), the lab's Rust
// gemm_bf16_swizzled_wide at 8192^3, cuBLAS's BF16 GEMM (cublasGemmEx,
// FP32 sums) at 8192^3, twice over. Each launch batch is timed with events;
// a host thread reads NVML's SM clock and power every 10 ms. Per phase it
// prints the median TFLOP/s, SM clock and power over the phase's last
// 2 s (steady state), and FLOP per SM cycle.
#include <cuda.h>
#include <cublas_v2.h>
#include <nvml.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>
#include <mutex>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cmath>
#include <string>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); fprintf(stderr, "%s: %s\n", #x, s_); exit(1);} } while (0)
#define CB(x) do { cublasStatus_t r_ = (x); if (r_ != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "%s: %d\n", #x, (int)r_); exit(1);} } while (0)

static double now_s() { using namespace std::chrono; return duration<double>(steady_clock::now().time_since_epoch()).count(); }

struct Sample { double t; unsigned sm; unsigned mw; };
static std::vector<Sample> samples; static std::mutex mu; static std::atomic<bool> stop{false};

static double median(std::vector<double> v) { if (v.empty()) return 0; std::sort(v.begin(), v.end()); return v[v.size()/2]; }

int main(int argc, char** argv) {
  double phase_s = argc > 1 ? atof(argv[1]) : 3.0;
  const char* ptx_path = argc > 2 ? argv[2] : "kernels_sm80.ptx";
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  int sms; CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  char name[256]; CK(cuDeviceGetName(name, 256, dev));
  if (nvmlInit() != NVML_SUCCESS) { fprintf(stderr, "nvml init failed\n"); return 1; }
  nvmlDevice_t nd; nvmlDeviceGetHandleByIndex(0, &nd);
  unsigned plimit = 0; nvmlDeviceGetEnforcedPowerLimit(nd, &plimit);
  printf("GPU %s, %d SMs, enforced power limit %u W, phase %.1f s\n", name, sms, plimit / 1000, phase_s);
  std::thread poll([&] { while (!stop) { unsigned sm = 0, mw = 0; nvmlDeviceGetClockInfo(nd, NVML_CLOCK_SM, &sm); nvmlDeviceGetPowerUsage(nd, &mw);
      { std::lock_guard<std::mutex> g(mu); samples.push_back({now_s(), sm, mw}); } std::this_thread::sleep_for(std::chrono::milliseconds(10)); } });

  // The lab's sm_80 module (mma_peak and the wide kernel), JIT-compiled here,
  // then any variant modules given as LABEL=PATH:SHARED_BYTES (their wide kernel).
  auto load = [](const char* path) { FILE* f = fopen(path, "rb"); if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END); long len = ftell(f); fseek(f, 0, SEEK_SET); std::vector<char> ptx(len + 1, 0); fread(ptx.data(), 1, len, f); fclose(f);
    CUmodule mod; CK(cuModuleLoadData(&mod, ptx.data())); return mod; };
  CUmodule mod = load(ptx_path);
  CUfunction peak; CK(cuModuleGetFunction(&peak, mod, "mma_peak"));
  std::vector<std::string> wnames; std::vector<CUfunction> wfuncs; std::vector<unsigned> wsmem;
  auto add_wide = [&](std::string label, CUmodule m, unsigned smem) { CUfunction f; CK(cuModuleGetFunction(&f, m, "gemm_bf16_swizzled_wide"));
    CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)); wnames.push_back(label); wfuncs.push_back(f); wsmem.push_back(smem); };
  add_wide("gemm_bf16_swizzled_wide 8192^3", mod, 147456);
  for (int i = 3; i < argc; ++i) { std::string s = argv[i]; auto eq = s.find('='), colon = s.rfind(':');
    add_wide("variant " + s.substr(0, eq) + " 8192^3", load(s.substr(eq + 1, colon - eq - 1).c_str()), (unsigned)atoi(s.substr(colon + 1).c_str())); }
  const unsigned N = 8192; const size_t nn = (size_t)N * N;
  std::vector<uint16_t> h16(nn); std::vector<float> h32(nn);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  auto rnd = [&] { s = s * 6364136223846793005ull + 1442695040888963407ull; return (float)((s >> 40) & 0xFFFFFF) / 16777216.0f * 2.0f - 1.0f; };
  CUdeviceptr a, b, c, d; CK(cuMemAlloc(&a, nn * 2)); CK(cuMemAlloc(&b, nn * 2)); CK(cuMemAlloc(&c, nn * 4)); CK(cuMemAlloc(&d, nn * 4));
  for (int which = 0; which < 2; ++which) { for (size_t i = 0; i < nn; ++i) { float v = rnd(); uint32_t u; memcpy(&u, &v, 4); h16[i] = (uint16_t)(u >> 16); } CK(cuMemcpyHtoD(which ? b : a, h16.data(), nn * 2)); }
  for (size_t i = 0; i < nn; ++i) h32[i] = rnd(); CK(cuMemcpyHtoD(c, h32.data(), nn * 4));
  const unsigned PEAK_THREADS = 256, PEAK_BLOCKS = 32 * sms, PEAK_ITERS = 2048, CHAINS = 8;
  CUdeviceptr pout; CK(cuMemAlloc(&pout, (size_t)PEAK_BLOCKS * (PEAK_THREADS / 32) * CHAINS * 128 * 4));
  cublasHandle_t h; CB(cublasCreate(&h)); CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING)); CB(cublasSetStream(h, (cudaStream_t)st));
  float alpha = 1.0f, beta = 0.5f;
  unsigned m = N, n = N, k = N;
  double gemm_flop = 2.0 * N * N * (double)N, peak_flop = (double)PEAK_BLOCKS * (PEAK_THREADS / 32) * PEAK_ITERS * CHAINS * 4096.0;
  auto launch = [&](int w) {
    if (w == 0) { unsigned it = PEAK_ITERS; void* p[] = {&pout, &it}; CK(cuLaunchKernel(peak, PEAK_BLOCKS, 1, 1, PEAK_THREADS, 1, 1, 0, st, p, 0)); }
    else if (w <= (int)wfuncs.size()) { void* p[] = {&m, &n, &k, &alpha, &a, &b, &beta, &c, &d}; CK(cuLaunchKernel(wfuncs[w - 1], N / 256, N / 128, 1, 256, 1, 1, wsmem[w - 1], st, p, 0)); }
    else { CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, (void*)b, CUDA_R_16BF, n, (void*)a, CUDA_R_16BF, k, &beta, (void*)d, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)); }
  };
  std::vector<std::string> names = {"mma_peak (mma.sync chains)"}; std::vector<double> flops = {peak_flop};
  for (auto& s : wnames) { names.push_back(s); flops.push_back(gemm_flop); }
  names.push_back("cublasGemmEx bf16 8192^3"); flops.push_back(gemm_flop);
  const int W = (int)names.size();
  // Each GEMM once, checked against cuBLAS's D (same inputs; D = A B + 0.5 C, cuBLAS in place on a copy of C).
  {
    std::vector<float> ref(nn), got(nn);
    CK(cuMemcpyDtoD(d, c, nn * 4)); launch(W - 1); CK(cuStreamSynchronize(st)); CK(cuMemcpyDtoH(ref.data(), d, nn * 4));
    for (int w = 1; w < W - 1; ++w) { CK(cuMemsetD8(d, 0xFF, nn * 4)); launch(w); CK(cuStreamSynchronize(st)); CK(cuMemcpyDtoH(got.data(), d, nn * 4));
      double worst = 0; size_t bad = 0; for (size_t i = 0; i < nn; ++i) { double e = fabs((double)got[i] - ref[i]); if (!(e <= 1e-2)) ++bad; if (e > worst || e != e) worst = e; }
      printf("check %s against cuBLAS: largest difference %.3g, %zu outputs past 1e-2\n", names[w].c_str(), worst, bad); }
  }
  for (int w = 0; w < W; ++w) { launch(w); launch(w); } CK(cuStreamSynchronize(st));
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  printf("phase | what | batches | TFLOP/s median (last 2 s) | min | max | SM MHz median | W median | FLOP per SM cycle\n");
  for (int rep = 0; rep < 2; ++rep) for (int w = 0; w < W; ++w) {
    double t0 = now_s(); std::vector<std::pair<double,double>> batches; // (end time, TFLOP/s)
    const int per = w == 0 ? 4 : 10;
    while (now_s() - t0 < phase_s) {
      CK(cuEventRecord(e0, st)); for (int i = 0; i < per; ++i) launch(w); CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1));
      float ms; CK(cuEventElapsedTime(&ms, e0, e1)); batches.push_back({now_s(), flops[w] * per / (ms * 1e-3) / 1e12});
    }
    double t1 = now_s(), from = t1 - 2.0; std::vector<double> tf, clk, pw;
    for (auto& x : batches) if (x.first >= from) tf.push_back(x.second);
    { std::lock_guard<std::mutex> g(mu); for (auto& x : samples) if (x.t >= from && x.t <= t1) { clk.push_back(x.sm); pw.push_back(x.mw / 1000.0); } }
    double tfm = median(tf), cm = median(clk);
    printf("%d | %s | %zu | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f\n", rep, names[w].c_str(), tf.size(), tfm, *std::min_element(tf.begin(), tf.end()), *std::max_element(tf.begin(), tf.end()), cm, median(pw), tfm * 1e12 / (sms * cm * 1e6));
    fflush(stdout);
  }
  // The first launches' throughput from idle: one batch each after 2 s of rest, to see the unthrottled rate.
  for (int w = 0; w < W; ++w) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    CK(cuEventRecord(e0, st)); launch(w); CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1)); float ms; CK(cuEventElapsedTime(&ms, e0, e1));
    printf("from rest | %s | one launch %.4f ms, %.1f TFLOP/s\n", names[w].c_str(), ms, flops[w] / (ms * 1e-3) / 1e12);
  }
  stop = true; poll.join();
  return 0;
}
