//! The specialization on the host side: a const-generic dot product
//! instantiated at N = 2, 4, 8 and 16, and the evidence that each
//! instantiation is a function of its own, read from the running binary's
//! symbol table (what the seed did with `nm --demangle`).
//!
//! How each symbol is tied to its N: the program takes the address of each
//! instantiation (a function pointer) and of one non-generic function, the
//! anchor; the anchor's symbol gives the load bias (the binary is
//! position-independent), and each instantiation's run-time address minus
//! that bias is its symbol's address in the file.
//!
//! Rust's default ("legacy") symbol mangling does not spell out generic
//! arguments: the four demangle to the same path and differ in their hash,
//! which covers the instantiation's arguments. With the v0 scheme
//! (`-C symbol-mangling-version=v0`) the demangled name reads
//! `dot_specialized::<4>`. Both are read here.

use std::hint::black_box;

use object::{Object, ObjectSymbol};
use serde::Serialize;

use crate::error::{Error, Result};

// ANCHOR: host_generic
/// `sum over k < N of a[k] * b[k]`, its length fixed at compile time: the
/// seed's `compile_time_specialized_dot<N>`. Never inlined, so every
/// instantiation stays a function in the binary; the loop has a constant
/// trip count, so each body is unrolled for its own N.
#[inline(never)]
pub fn dot_specialized<const N: usize>(a: &[f32; N], b: &[f32; N]) -> f32 {
    let mut sum = 0.0f32;
    for k in 0..N {
        sum += a[k] * b[k];
    }
    sum
}
// ANCHOR_END: host_generic

/// One call of an instantiation on known inputs: what it returned and what
/// the arithmetic says it must (all values small integers, so exact).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Example {
    /// The instantiation's N.
    pub n: usize,
    /// The inputs.
    pub a: Vec<f32>,
    /// The inputs.
    pub b: Vec<f32>,
    /// What `dot_specialized::<N>` returned.
    pub got: f32,
    /// The hand-checked answer.
    pub want: f32,
}

/// `a = 1..=N`, `b = the same`: the sum of squares N(N+1)(2N+1)/6.
fn squares<const N: usize>() -> Example {
    let a: [f32; N] = std::array::from_fn(|k| (k + 1) as f32);
    let want = (N * (N + 1) * (2 * N + 1) / 6) as f32;
    Example {
        n: N,
        a: a.to_vec(),
        b: a.to_vec(),
        got: dot_specialized::<N>(black_box(&a), black_box(&a)),
        want,
    }
}

/// The seed's two calls, [1,2,3,4].[5,6,7,8] = 70 and [2,3].[4,5] = 23,
/// then N = 8 and 16 on 1..=N with itself (204 and 1496). The inputs go
/// through `black_box`, so the compiler cannot fold the calls away.
pub fn examples() -> Vec<Example> {
    let (a4, b4) = ([1.0f32, 2.0, 3.0, 4.0], [5.0f32, 6.0, 7.0, 8.0]);
    let (a2, b2) = ([2.0f32, 3.0], [4.0f32, 5.0]);
    vec![
        Example {
            n: 4,
            a: a4.to_vec(),
            b: b4.to_vec(),
            got: dot_specialized::<4>(black_box(&a4), black_box(&b4)),
            want: 70.0,
        },
        Example {
            n: 2,
            a: a2.to_vec(),
            b: b2.to_vec(),
            got: dot_specialized::<2>(black_box(&a2), black_box(&b2)),
            want: 23.0,
        },
        squares::<8>(),
        squares::<16>(),
    ]
}

/// The run-time addresses of the anchor (this function) and of
/// `dot_specialized::<N>` for N = 2, 4, 8, 16. Never inlined: it is its
/// own symbol, the anchor.
#[inline(never)]
pub fn instantiation_addresses() -> (usize, [(usize, usize); 4]) {
    let anchor = instantiation_addresses as fn() -> (usize, [(usize, usize); 4]) as usize;
    let at = [
        (
            2,
            dot_specialized::<2> as fn(&[f32; 2], &[f32; 2]) -> f32 as usize,
        ),
        (
            4,
            dot_specialized::<4> as fn(&[f32; 4], &[f32; 4]) -> f32 as usize,
        ),
        (
            8,
            dot_specialized::<8> as fn(&[f32; 8], &[f32; 8]) -> f32 as usize,
        ),
        (
            16,
            dot_specialized::<16> as fn(&[f32; 16], &[f32; 16]) -> f32 as usize,
        ),
    ];
    (black_box(anchor), black_box(at))
}

/// One instantiation as the binary's symbol table lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostSymbol {
    /// The N it was instantiated for (from its address, see the module
    /// docs).
    pub n: usize,
    /// The symbol as stored.
    pub mangled: String,
    /// Demangled, with the hash (legacy mangling) or the generic arguments
    /// (v0).
    pub demangled: String,
    /// Its address in the file (as `nm` prints it).
    pub address: u64,
    /// Its size in bytes, from the symbol table.
    pub size: u64,
}

/// Whether a demangled name (without its hash) is the generic
/// `dot_specialized` of this module, in either mangling scheme.
fn is_instantiation(plain: &str) -> bool {
    plain.ends_with("specialize::binary::dot_specialized")
        || plain.contains("specialize::binary::dot_specialized::<")
}

/// Reads `path`'s symbol table and finds each instantiation of
/// [`dot_specialized`] whose run-time address `instantiation_addresses`
/// reports, plus every other symbol of that generic the table holds (all
/// returned in N order; `n` = 0 for one with no run-time address here).
///
/// # Errors
/// [`Error::Tool`] when the file cannot be read or parsed, has no symbol
/// table (a fully stripped binary), or lacks the anchor or an
/// instantiation.
pub fn host_symbols(path: &std::path::Path) -> Result<Vec<HostSymbol>> {
    let fail = |what: String| Error::Tool(format!("{}: {what}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let file = object::File::parse(&*bytes).map_err(|e| fail(e.to_string()))?;
    let (anchor, at) = instantiation_addresses();
    let mut anchor_address = None;
    let mut found = Vec::new();
    for symbol in file.symbols() {
        let Ok(name) = symbol.name() else { continue };
        let Ok(demangled) = rustc_demangle::try_demangle(name) else {
            continue;
        };
        let plain = format!("{demangled:#}");
        if plain.ends_with("specialize::binary::instantiation_addresses") {
            anchor_address = Some(symbol.address());
        } else if is_instantiation(&plain) {
            found.push(HostSymbol {
                n: 0,
                mangled: name.to_string(),
                demangled: demangled.to_string(),
                address: symbol.address(),
                size: symbol.size(),
            });
        }
    }
    if found.is_empty() && anchor_address.is_none() {
        return Err(fail(
            "no symbol table (stripped?): the release profile keeps it with strip = \"debuginfo\""
                .into(),
        ));
    }
    let anchor_address =
        anchor_address.ok_or_else(|| fail("no symbol for instantiation_addresses".into()))?;
    let bias = (anchor as u64).wrapping_sub(anchor_address);
    for (n, runtime) in at {
        let address = (runtime as u64).wrapping_sub(bias);
        let s = found
            .iter_mut()
            .find(|s| s.address == address)
            .ok_or_else(|| {
                fail(format!(
                    "no symbol at {address:#x}, where dot_specialized::<{n}> is"
                ))
            })?;
        s.n = n;
    }
    found.sort_by_key(|s| (s.n == 0, s.n, s.address));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_examples_and_the_sums_of_squares() {
        let e = examples();
        let got: Vec<(usize, f32, f32)> = e.iter().map(|e| (e.n, e.got, e.want)).collect();
        assert_eq!(
            got,
            vec![
                (4, 70.0, 70.0),
                (2, 23.0, 23.0),
                (8, 204.0, 204.0),
                (16, 1496.0, 1496.0)
            ]
        );
    }

    #[test]
    fn the_names_either_mangling_gives_are_recognised() {
        assert!(is_instantiation(
            "host::specialize::binary::dot_specialized"
        ));
        assert!(is_instantiation(
            "host::specialize::binary::dot_specialized::<4>"
        ));
        assert!(!is_instantiation("host::specialize::binary::examples"));
    }
}
