//! The text's structure: entry names, the parameter convention the host
//! relies on, launch shapes, and kernels rejected with clear errors.

use oxla_core::kernel::{InstKind, Kernel};
use oxla_core::DType;
use oxla_ptx::samples::{self, c, n, Builder};
use oxla_ptx::{emit_kernel, emit_module, launch_config, Arch, BLOCK};

/// The `.param` lines of entry `name` in `ptx`.
fn params_of(ptx: &str, name: &str) -> Vec<String> {
    let start = ptx
        .find(&format!(".visible .entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let rest = &ptx[start..];
    let head = &rest[..rest.find(')').unwrap()];
    head.lines()
        .filter(|l| l.contains(".param"))
        .map(|l| l.trim().trim_end_matches(',').to_string())
        .collect()
}

#[test]
fn one_entry_per_kernel_with_buffers_then_sizes_as_u64_params() {
    let kernels = samples::all();
    let ptx = emit_module(&kernels, Arch::Sm90).unwrap();
    // Plus the fill entry: the samples hold max/min reductions.
    assert!(oxla_ptx::needs_fill(&kernels));
    assert_eq!(ptx.matches(".visible .entry ").count(), kernels.len() + 1);
    assert_eq!(
        params_of(&ptx, oxla_ptx::FILL_ENTRY),
        [
            ".param .u64 dst",
            ".param .u64 count",
            ".param .u64 width",
            ".param .u64 bits"
        ]
    );
    for k in &kernels {
        let params = params_of(&ptx, &k.name);
        let mut expect: Vec<String> = (0..k.args.len())
            .map(|i| format!(".param .u64 arg{i}"))
            .collect();
        expect.extend((0..k.sizes.len()).map(|j| format!(".param .u64 size{j}")));
        assert_eq!(params, expect, "{}", k.name);
    }
}

#[test]
fn header_names_version_target_and_address_size() {
    let k = &samples::all()[0];
    for (arch, target) in [(Arch::Sm80, "sm_80"), (Arch::Sm90, "sm_90")] {
        let ptx = emit_kernel(k, arch).unwrap();
        assert!(ptx.contains(".version 8.0\n"));
        assert!(ptx.contains(&format!(".target {target}\n")));
        assert!(ptx.contains(".address_size 64\n"));
        assert!(ptx.contains(&format!(".maxntid {BLOCK}, 1, 1")));
    }
}

#[test]
fn reductions_use_shuffles_and_one_atomic_per_store() {
    let kernels = samples::all();
    let find = |name: &str| kernels.iter().find(|k| k.name == name).unwrap().clone();
    let two = emit_kernel(&find("fused_sum_two"), Arch::Sm80).unwrap();
    assert!(two.contains("shfl.sync.down.b32"));
    assert_eq!(two.matches("atom.global.add.f32").count(), 2);
    let f64_sum = emit_kernel(&find("sum_f64"), Arch::Sm80).unwrap();
    assert_eq!(f64_sum.matches("atom.global.add.f64").count(), 1);
    // Summing into an f16 output cannot use atomics: one converted store.
    let f16_sum = emit_kernel(&find("sum_into_f16"), Arch::Sm80).unwrap();
    assert!(!f16_sum.contains("atom."));
    assert!(f16_sum.contains("st.global.b16"));
}

#[test]
fn max_min_keep_nan_semantics_and_f64_math_has_no_approximations() {
    for k in samples::all() {
        let ptx = emit_kernel(&k, Arch::Sm90).unwrap();
        assert!(
            !ptx.contains("max.f") && !ptx.contains("min.f"),
            "{}",
            k.name
        );
        if k.insts.iter().all(|i| i.ty != DType::F32) {
            assert!(!ptx.contains(".approx"), "{} uses an approximation", k.name);
        }
    }
}

#[test]
fn launch_config_fills_the_device_and_never_launches_zero_blocks() {
    let kernels = samples::all();
    let find = |name: &str| kernels.iter().find(|k| k.name == name).unwrap();
    let map = find("binary_add_f32");
    let cfg = launch_config(map, &[10_000_000], 132);
    assert_eq!(cfg.block, (BLOCK, 1, 1));
    assert_eq!(cfg.grid, (132 * 8, 1, 1));
    assert_eq!(launch_config(map, &[0], 132).grid, (1, 1, 1));
    assert_eq!(launch_config(map, &[300], 132).grid, (2, 1, 1));
    let sum = find("sum_f32");
    assert_eq!(launch_config(sum, &[10], 132).grid, (1, 1, 1));
    assert_eq!(launch_config(sum, &[10_000_000], 132).grid, (132 * 8, 1, 1));
    assert_eq!(launch_config(sum, &[10_000_000], 132).shared_bytes, 0);
}

#[test]
fn malformed_kernels_are_rejected() {
    let good = || {
        let mut b = Builder::new(
            "ok",
            &[(DType::F32, false), (DType::F32, true)],
            &["n"],
            vec![n()],
            0,
        );
        let x = b.load(DType::F32, 0, vec![c(1)]);
        b.store(1, x).build()
    };
    assert!(emit_kernel(&good(), Arch::Sm80).is_ok());
    let mut bad_name = good();
    bad_name.name = "has space".into();
    assert!(emit_kernel(&bad_name, Arch::Sm80).is_err());
    let mut load_output = good();
    load_output.insts[0].kind = InstKind::Load {
        arg: 1,
        strides: vec![c(1)],
        offset: Vec::new(),
    };
    // The kernel verifier's error (`Kernel::verify`, run first).
    let e = emit_kernel(&load_output, Arch::Sm80).unwrap_err();
    assert!(
        e.contains("kernel `ok`: v0: loads a1, which is an output"),
        "{e}"
    );
    let mut bad_strides = good();
    bad_strides.insts[0].kind = InstKind::Load {
        arg: 0,
        strides: vec![],
        offset: Vec::new(),
    };
    assert!(emit_kernel(&bad_strides, Arch::Sm80).is_err());
    let mut unknown_size = good();
    unknown_size.sizes.clear();
    assert!(emit_kernel(&unknown_size, Arch::Sm80).is_err());
    let mut int_value = good();
    int_value.insts[0].ty = DType::I32;
    assert!(emit_kernel(&int_value, Arch::Sm80).is_err());
    let dup: Vec<Kernel> = vec![good(), good()];
    assert!(emit_module(&dup, Arch::Sm80).is_err());
}

/// A module with `sin`/`cos` declares the 2/π table once and reaches it only
/// behind a branch; a module without them has no table. `max`/`min` test
/// for NaN. (What the instructions compute is tested on their models.)
#[test]
fn trig_table_branch_and_nan_aware_max() {
    let find = |name: &str| samples::all().into_iter().find(|k| k.name == name).unwrap();
    let trig = emit_module(&[find("unary_sin_f32"), find("unary_cos_f64")], Arch::Sm80).unwrap();
    assert_eq!(
        trig.matches(".const .align 8 .u64 oxla_two_over_pi[20]")
            .count(),
        1
    );
    assert_eq!(
        trig.matches("ld.const.u64").count(),
        8,
        "4 loads per kernel"
    );
    assert_eq!(trig.matches(" bra $L_trig_join").count(), 2);
    assert!(!trig.contains(".approx"), "f32 sin is computed in f64");
    let plain = emit_kernel(&find("sum_f32"), Arch::Sm80).unwrap();
    assert!(!plain.contains("oxla_two_over_pi"));
    for name in ["binary_max_f32", "binary_min_f64"] {
        let ptx = emit_kernel(&find(name), Arch::Sm90).unwrap();
        assert!(ptx.contains("setp.nan."), "{name}");
    }
}

/// Max and min merge block results by compare-and-swap (no float atomic
/// max exists), never by an atomic add; a converted store needs neither;
/// a module with them has the fill entry, one without has none.
#[test]
fn max_min_reductions_use_cas_and_the_fill_entry() {
    let find = |name: &str| samples::all().into_iter().find(|k| k.name == name).unwrap();
    for (name, bits, stores) in [
        ("max_f32", "b32", 1),
        ("min_f64", "b64", 1),
        ("max2d_two", "b32", 2),
    ] {
        let ptx = emit_kernel(&find(name), Arch::Sm80).unwrap();
        assert_eq!(
            ptx.matches(&format!("atom.global.cas.{bits}")).count(),
            stores,
            "{name}"
        );
        assert!(!ptx.contains("atom.global.add"), "{name}");
        assert!(ptx.contains("shfl.sync.down.b32"), "{name}");
        assert!(ptx.contains(oxla_ptx::FILL_ENTRY), "{name}");
    }
    // -inf and +inf start the accumulators.
    let max = emit_kernel(&find("max_f32"), Arch::Sm80).unwrap();
    assert!(max.contains("0fFF800000"));
    let min = emit_kernel(&find("min_f64"), Arch::Sm80).unwrap();
    assert!(min.contains("0d7FF0000000000000"));
    let f16 = emit_kernel(&find("min_into_f16"), Arch::Sm80).unwrap();
    assert!(!f16.contains("atom."));
    let sum = emit_kernel(&find("sum_f32"), Arch::Sm80).unwrap();
    assert!(!sum.contains(oxla_ptx::FILL_ENTRY));
    // A kernel may not take the fill entry's name.
    let mut clash = find("max_f32");
    clash.name = oxla_ptx::FILL_ENTRY.into();
    assert!(emit_kernel(&clash, Arch::Sm80).is_err());
}

/// `Size` is converted from the size parameter once, `Index` from the
/// decoded coordinate; both reject what the kernel does not define.
#[test]
fn size_and_index_lower_to_conversions() {
    let find = |name: &str| samples::all().into_iter().find(|k| k.name == name).unwrap();
    let ptx = emit_kernel(&find("iota_and_size"), Arch::Sm90).unwrap();
    assert!(ptx.contains("cvt.rn.f32.u64"));
    assert!(ptx.contains("cvt.rn.f64.u64"));
    let mut bad = find("iota_and_size");
    let i = bad
        .insts
        .iter()
        .position(|i| matches!(i.kind, InstKind::Index(_)))
        .unwrap();
    bad.insts[i].kind = InstKind::Index(2);
    assert!(emit_kernel(&bad, Arch::Sm80).is_err());
    let mut bad = find("mean_by_size_f64");
    let i = bad
        .insts
        .iter()
        .position(|i| matches!(i.kind, InstKind::Size(_)))
        .unwrap();
    bad.insts[i].kind = InstKind::Size(samples::sym("q"));
    assert!(emit_kernel(&bad, Arch::Sm80).is_err());
}

/// Issue 20, item 3b: a gather's (and its transpose's) index is wrapped
/// once if negative before it is clamped, as JAX's indexing does: the
/// emitted sequence is a `setp.lt.f64` against 0, `add.f64` of the axis
/// length, a `selp.f64` of the two, then the clamp (`min.f64`, `max.f64`).
#[test]
fn a_negative_gather_index_is_wrapped_before_the_clamp() {
    let f = oxla_core::text::parse(
        "fn lookup(x %0: f32[v, d], ids %1: i64[n]) {\n  %2: f32[n, d] = gather[0,0] %0 %1\n  return %2\n}",
    )
    .unwrap();
    let g = oxla_core::transforms::vjp(&f);
    for prog in [&f, &g] {
        let kernels = oxla_core::kernel::fusion::fuse(prog).unwrap().kernels;
        let ptx = emit_module(&kernels, Arch::Sm90).unwrap();
        let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
        let min = lines
            .iter()
            .position(|l| l.starts_with("min.f64"))
            .unwrap_or_else(|| panic!("no clamp:\n{ptx}"));
        // The three instructions just before the clamp's `sub.f64` (the
        // axis's last index) and `min.f64`.
        let before: Vec<&str> = lines[..min]
            .iter()
            .filter(|l| !l.starts_with("//") && !l.is_empty())
            .rev()
            .take(5)
            .map(|l| l.split_whitespace().next().unwrap_or(""))
            .collect();
        assert_eq!(
            before,
            [
                "sub.f64",
                "selp.f64",
                "add.f64",
                "setp.lt.f64",
                "cvt.rn.f64.u64"
            ],
            "{ptx}"
        );
    }
}

/// A gather's index is clamped into the axis (`min.f64`, `max.f64`) and its
/// load waits behind the empty-axis test, and the gradient's
/// scatter-add adds with `atom.global.add` (f64 and f32); an f16 result,
/// which has no atomic add here, is refused with a clear error.
#[test]
fn a_gather_is_guarded_and_its_transpose_adds_atomically() {
    for dtype in ["f64", "f32", "f16"] {
        let f = oxla_core::text::parse(&format!(
            "fn lookup(x %0: {dtype}[v, d], ids %1: i64[n]) {{\n  %2: {dtype}[n, d] = gather[0,0] %0 %1\n  return %2\n}}"
        ))
        .unwrap();
        let g = oxla_core::transforms::vjp(&f);
        let gather = oxla_core::kernel::fusion::fuse(&f).unwrap().kernels;
        let ptx = emit_module(&gather, Arch::Sm90).unwrap();
        assert!(
            ptx.contains("min.f64")
                && ptx.contains("max.f64")
                && ptx.contains("setp.lt.f64")
                && ptx.contains("gather_skip"),
            "{ptx}"
        );
        let scatter = oxla_core::kernel::fusion::fuse(&g).unwrap().kernels;
        match (dtype, emit_module(&scatter, Arch::Sm90)) {
            ("f16", Err(e)) => assert!(e.contains("scatter-add into f16"), "{e}"),
            (_, Ok(ptx)) => assert!(ptx.contains(&format!("atom.global.add.{dtype}")), "{ptx}"),
            (_, Err(e)) => panic!("{dtype}: {e}"),
        }
    }
}
