//! Scratch rig: times PTX variants of one kernel on the same buffers,
//! interleaved, and checks each variant's output against the first's.
//! usage: rig KIND SIZE REPS TRIALS label=file.ptx[:entry] ...
//! KIND: matmul (roofline matmul_naive: a,b,c,d u64; 16x16 blocks)
//!       gemm (gemm_naive: m,n,k,alpha,a,b,beta,c,d; 32x8 blocks)
use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg, sys::CUevent_flags};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;

fn fill(n: usize, seed: u32) -> Vec<f32> {
    // non-periodic: a hash of the index into [-1, 1)
    (0..n).map(|i| {
        let mut x = (i as u32).wrapping_mul(2654435761).wrapping_add(seed.wrapping_mul(40503));
        x ^= x >> 13; x = x.wrapping_mul(0x5bd1e995); x ^= x >> 15;
        (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = args[1].clone();
    let size: usize = args[2].parse().unwrap();
    let reps: usize = args[3].parse().unwrap();
    let trials: usize = args[4].parse().unwrap();
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let mut modules = HashMap::new();
    let mut variants = Vec::new();
    for spec in &args[5..] {
        let (label, rest) = spec.split_once('=').unwrap();
        let (file, entry) = match rest.split_once(':') { Some((f, e)) => (f.to_string(), e.to_string()), None => (rest.to_string(), match kind.as_str() { "matmul" => "matmul_naive".into(), "transpose" => "transpose_tiled".into(), _ => "gemm_naive".into() }) };
        let module = modules.entry(file.clone()).or_insert_with(|| {
            let src = std::fs::read_to_string(&file).unwrap();
            ctx.load_module(Ptx::from_src(src)).unwrap_or_else(|e| panic!("{file}: {e:?}"))
        }).clone();
        let f = module.load_function(&entry).unwrap_or_else(|e| panic!("{file}:{entry}: {e:?}"));
        let regs = f.get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS).unwrap();
        variants.push((label.to_string(), f, regs));
    }
    let n = size;
    let a = stream.memcpy_stod(&fill(n * n, 1)).unwrap();
    let b = stream.memcpy_stod(&fill(n * n, 2)).unwrap();
    let c = stream.memcpy_stod(&fill(n * n, 3)).unwrap();
    let mut d = stream.alloc_zeros::<f32>(n * n).unwrap();
    let (cfg, ) = if kind == "matmul" {
        (LaunchConfig { grid_dim: ((n / 16) as u32, (n / 16) as u32, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 },)
    } else if kind == "transpose" {
        (LaunchConfig { grid_dim: ((n / 32) as u32, (n / 32) as u32, 1), block_dim: (32, 32, 1), shared_mem_bytes: 0 },)
    } else {
        (LaunchConfig { grid_dim: (n.div_ceil(32) as u32, n.div_ceil(8) as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 },)
    };
    let (nu, d64, alpha, beta) = (n as u32, n as u64, 1.25f32, -0.5f32);
    let launch = |f: &cudarc::driver::CudaFunction, d: &mut cudarc::driver::CudaSlice<f32>| unsafe {
        let mut lb = stream.launch_builder(f);
        if kind == "matmul" {
            lb.arg(&a).arg(&b).arg(d).arg(&d64);
        } else if kind == "transpose" {
            lb.arg(&a).arg(d).arg(&d64);
        } else {
            lb.arg(&nu).arg(&nu).arg(&nu).arg(&alpha).arg(&a).arg(&b).arg(&beta).arg(&c).arg(d);
        }
        lb.launch(cfg).unwrap();
    };
    // correctness: every variant's output equals the first's, bit for bit
    let mut first: Option<Vec<f32>> = None;
    for (label, f, regs) in &variants {
        stream.memset_zeros(&mut d).unwrap();
        launch(f, &mut d);
        let out = stream.memcpy_dtov(&d).unwrap();
        let same = match &first { None => { first = Some(out.clone()); "reference".to_string() }, Some(r) => {
            let diff = r.iter().zip(&out).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
            if diff == 0 { "identical".into() } else { format!("DIFFERS in {diff} elements") } } };
        println!("{label}: {regs} registers, output {same}");
    }
    let ev = |_| ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
    let (start, stop) = (ev(0), ev(1));
    let mut ms: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for t in 0..trials {
        let order: Vec<usize> = if t % 2 == 0 { (0..variants.len()).collect() } else { (0..variants.len()).rev().collect() };
        for &i in &order {
            let f = &variants[i].1;
            for _ in 0..3 { launch(f, &mut d); }
            start.record(&stream).unwrap();
            for _ in 0..reps { launch(f, &mut d); }
            stop.record(&stream).unwrap();
            stop.synchronize().unwrap();
            ms[i].push(start.elapsed_ms(&stop).unwrap() as f64 / reps as f64);
        }
    }
    let med = |v: &Vec<f64>| { let mut s = v.clone(); s.sort_by(|a, b| a.partial_cmp(b).unwrap()); (s[s.len() / 2] + s[(s.len() - 1) / 2]) / 2.0 };
    let base = med(&ms[0]);
    for (i, (label, _, _)) in variants.iter().enumerate() {
        let m = med(&ms[i]);
        let lo = ms[i].iter().cloned().fold(f64::MAX, f64::min);
        let hi = ms[i].iter().cloned().fold(0.0, f64::max);
        println!("{kind} {size} {label:>14}: median {m:.5} ms (min {lo:.5}, max {hi:.5}) ratio to {} {:.4}", variants[0].0, m / base);
    }
}
