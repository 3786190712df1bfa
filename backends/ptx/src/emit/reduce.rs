//! The reduction loop of a reduction kernel: work units of (output,
//! chunk), per-thread pairwise cascades, warp shuffles and the atomic
//! combine into the output; and `model`, its summation order in Rust.
//!
//! # Summation order and error of reductions
//!
//! One output sums `n` values over `A` chunks (`A ≤ ⌈grid / outputs⌉`, at
//! most 8 blocks per SM, and `A ≤ ⌈n / 1024⌉`); chunk lengths are multiples
//! of 1024. In a chunk, thread `t` takes trips of four elements
//! (`t + 256·(4j + u)`, summed as `(v0+v1)+(v2+v3)`) and then single ones;
//! trip sums go through a binary-counter cascade of [`LEVELS`] pairwise
//! partial sums (`cascade_add`), so a thread's `T` trips are summed
//! pairwise with depth `⌈log2 T⌉`, plus at most `⌈log2 T⌉` additions
//! combining the levels. Warps then add by a shuffle tree (depth 5), warp 0
//! adds the 8 warp sums (depth 3), and thread 0 adds the chunk's sum into the
//! output with one atomic: `A - 1` sequential additions in arbitrary order.
//!
//! Every element therefore passes through at most
//! `D = 2 + 2⌈log2(T + 1)⌉ + 8 + (A - 1)` roundings, and the computed sum
//! `ŝ` satisfies `|ŝ - s| ≤ γ_D · Σ|x_i|`, `γ_D = D·u/(1 - D·u)` (`u` = 2⁻²⁴
//! for f32, 2⁻⁵³ for f64), with `T ≈ n / (1024·A)`: the error grows like
//! `log n` (before this order, each thread added its `n/(256·A)` elements
//! sequentially: linear in `n`). The `A - 1` term does not grow with `n`
//! but is up to ~1000 on a large GPU (8 blocks × 132 SMs on an H200).
//! Integer sums stay exact while each partial is representable: chunk
//! partials of a sum of ones are multiples of 1024, so the f32 atomic
//! running sums are exact up to 2^34 and an f32 sum of 2^29 ones is exact.
//! `model` below replays this order in Rust; its tests pin these claims
//! (`f32_sum_of_2_pow_25_ones_is_exact`, `f32_sum_of_2_pow_29_ones_is_exact`
//! (ignored: ~15 s), `f32_random_sum_error_is_small`).

use super::{Coord, Emitter};
use crate::func::Class;
use crate::launch::{uses_atomics, BLOCK, MIN_CHUNK, WARPS};
use crate::ops;
use crate::values::{self, convert, Ty, Val};
use oxla_core::kernel::Reduce;

/// Levels of the per-thread pairwise cascade: 2^(LEVELS-1) trips (of four
/// elements) per thread and unit are summed pairwise; beyond that the top
/// level adds sequentially.
pub(crate) const LEVELS: usize = 24;

/// What the steps of a reduction's emission share, from its prologue.
struct ReductionRegs {
    sum: bool,
    atomics: bool,
    /// The number of outer (output) axes.
    outer: usize,
    n_out: String,
    n_in: String,
    /// The label after the loop over work units.
    end: String,
    /// The predicate the bounds tests write.
    p: String,
    tid: String,
    lane: String,
    warp: String,
    ncta: String,
}

/// One work unit: its output index `o`, its chunk `begin..stop` of the
/// reduced range, and the output's coordinates.
struct UnitRange {
    o: String,
    begin: String,
    stop: String,
    outer_coords: Vec<Coord>,
}

impl Emitter<'_> {
    /// Reduction: work units are (outer index, chunk of the reduced index
    /// range); each block takes units in a grid-stride loop, its threads sum
    /// their elements of the chunk, the block combines them with warp
    /// shuffles and shared memory, and thread 0 adds the result atomically
    /// into the zeroed output (or stores it, when the chunk is everything).
    /// Max and min combine with the NaN-propagating rule instead of adding,
    /// with one accumulator per thread (they are exact in any order), and
    /// thread 0 merges into the output, which the host filled with -inf /
    /// +inf, by a compare-and-swap loop (`atomic_combine`).
    pub(super) fn reduction(&mut self) {
        let red = self.reduction_prologue();
        let (chunks, chunk_len) = self.reduction_chunks(&red);
        let (units, unit, step, tid64) = self.reduction_unit_loop_setup(&red, &chunks);

        let unit_top = self.f.new_label("unit");
        self.f.place_label(&unit_top);
        let range = self.reduction_unit_range(&red, &units, &unit, &chunks, &chunk_len);
        let (acc_tys, levels) = self.reduction_accumulators(red.sum);
        self.reduction_thread_loop(&red, &range, &tid64, &acc_tys, &levels);
        let accs = self.reduction_thread_total(&levels, &acc_tys);
        let totals = self.reduction_block_combine(&red, &accs, &acc_tys);
        self.reduction_write_unit(&red, &range.o, &totals, &acc_tys);
        self.f.ins("bar.sync 0");
        self.f.ins(format!("add.u64 {unit}, {unit}, {step}"));
        self.f.ins(format!("bra {unit_top}"));
        self.f.place_label(&red.end);
        self.f.ins("ret");
    }

    /// The reduction's entry: the output and reduced counts, the early exit
    /// when either is zero, the shared memory of the block combine, and the
    /// thread's lane and warp.
    fn reduction_prologue(&mut self) -> ReductionRegs {
        let k = self.k;
        let sum = k.reduce == Reduce::Sum;
        let (outer, rank) = (k.outer_dims(), k.domain.len());
        let atomics = uses_atomics(k);
        let n_out = self.product(0..outer);
        let n_in = self.product(outer..rank);
        let end = self.f.new_label("done");
        let p = self.f.reg(Class::Pred);
        // Nothing to combine: the host's fill (zeros, -inf or +inf) is the
        // answer.
        self.f.ins(format!("setp.eq.u64 {p}, {n_out}, 0"));
        self.f.ins(format!("@{p} bra {end}"));
        self.f.ins(format!("setp.eq.u64 {p}, {n_in}, 0"));
        self.f.ins(format!("@{p} bra {end}"));

        let smem_bytes = (k.stores.len().max(1) as u32) * WARPS * 8;
        self.f
            .decl(format!(".shared .align 8 .b8 red_smem[{smem_bytes}];"));
        let (tid, lane, warp, ncta) = (
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
        );
        self.f.ins(format!("mov.u32 {tid}, %tid.x"));
        self.f.ins(format!("and.b32 {lane}, {tid}, 31"));
        self.f.ins(format!("shr.u32 {warp}, {tid}, 5"));
        self.f.ins(format!("mov.u32 {ncta}, %nctaid.x"));
        ReductionRegs {
            sum,
            atomics,
            outer,
            n_out,
            n_in,
            end,
            p,
            tid,
            lane,
            warp,
            ncta,
        }
    }

    /// The number of chunks each output's reduced range is split into, and
    /// the chunk length.
    fn reduction_chunks(&mut self, red: &ReductionRegs) -> (String, String) {
        let (n_in, n_out, ncta) = (&red.n_in, &red.n_out, &red.ncta);
        // chunks = clamp(min(⌈n_in/MIN_CHUNK⌉, ⌈grid/n_out⌉), 1, ..):
        // split the reduced range only as far as it fills the grid.
        let chunks = self.f.reg(Class::B64);
        if red.atomics {
            let t = self.f.reg(Class::B64);
            self.f
                .ins(format!("add.u64 {chunks}, {n_in}, {}", MIN_CHUNK - 1));
            self.f
                .ins(format!("div.u64 {chunks}, {chunks}, {MIN_CHUNK}"));
            self.f.ins(format!("cvt.u64.u32 {t}, {ncta}"));
            self.f.ins(format!("add.u64 {t}, {t}, {n_out}"));
            self.f.ins(format!("sub.u64 {t}, {t}, 1"));
            self.f.ins(format!("div.u64 {t}, {t}, {n_out}"));
            self.f.ins(format!("min.u64 {chunks}, {chunks}, {t}"));
            self.f.ins(format!("max.u64 {chunks}, {chunks}, 1"));
        } else {
            self.f.ins(format!("mov.u64 {chunks}, 1"));
        }
        let chunk_len = self.f.reg(Class::B64);
        self.f.ins(format!("add.u64 {chunk_len}, {n_in}, {chunks}"));
        self.f.ins(format!("sub.u64 {chunk_len}, {chunk_len}, 1"));
        self.f
            .ins(format!("div.u64 {chunk_len}, {chunk_len}, {chunks}"));
        if red.atomics {
            // A multiple of MIN_CHUNK, so a chunk's count of ones (say) is a
            // multiple of 1024 and the atomic partial sums stay exact longer.
            self.f.ins(format!(
                "add.u64 {chunk_len}, {chunk_len}, {}",
                MIN_CHUNK - 1
            ));
            self.f
                .ins(format!("div.u64 {chunk_len}, {chunk_len}, {MIN_CHUNK}"));
            self.f
                .ins(format!("mul.lo.u64 {chunk_len}, {chunk_len}, {MIN_CHUNK}"));
        }
        (chunks, chunk_len)
    }

    /// The grid-stride loop over work units: their count, this block's
    /// first unit and the stride, and the thread index in 64 bits
    /// (returned in that order).
    fn reduction_unit_loop_setup(
        &mut self,
        red: &ReductionRegs,
        chunks: &str,
    ) -> (String, String, String, String) {
        let (n_out, tid, ncta) = (&red.n_out, &red.tid, &red.ncta);
        let units = self.f.reg(Class::B64);
        self.f.ins(format!("mul.lo.u64 {units}, {n_out}, {chunks}"));
        let unit = self.f.reg(Class::B64);
        let step = self.f.reg(Class::B64);
        let tid64 = self.f.reg(Class::B64);
        self.f.ins(format!("mov.u32 {tid}, %tid.x"));
        self.f.ins(format!("cvt.u64.u32 {tid64}, {tid}"));
        let cta = self.f.reg(Class::B32);
        self.f.ins(format!("mov.u32 {cta}, %ctaid.x"));
        self.f.ins(format!("cvt.u64.u32 {unit}, {cta}"));
        self.f.ins(format!("cvt.u64.u32 {step}, {ncta}"));
        (units, unit, step, tid64)
    }

    /// The top of a unit: leave when the units are done, else the unit's
    /// output index, the bounds of its chunk and the output's coordinates.
    fn reduction_unit_range(
        &mut self,
        red: &ReductionRegs,
        units: &str,
        unit: &str,
        chunks: &str,
        chunk_len: &str,
    ) -> UnitRange {
        let (p, end, n_in) = (&red.p, &red.end, &red.n_in);
        self.f.ins(format!("setp.ge.u64 {p}, {unit}, {units}"));
        self.f.ins(format!("@{p} bra {end}"));
        let (o, c) = (self.f.reg(Class::B64), self.f.reg(Class::B64));
        self.f.ins(format!("div.u64 {o}, {unit}, {chunks}"));
        self.f.ins(format!("mul.lo.u64 {c}, {o}, {chunks}"));
        self.f.ins(format!("sub.u64 {c}, {unit}, {c}"));
        let (begin, stop) = (self.f.reg(Class::B64), self.f.reg(Class::B64));
        self.f.ins(format!("mul.lo.u64 {begin}, {c}, {chunk_len}"));
        self.f.ins(format!("add.u64 {stop}, {begin}, {chunk_len}"));
        self.f.ins(format!("min.u64 {stop}, {stop}, {n_in}"));
        let outer_coords = self.decode(&o, 0..red.outer);
        UnitRange {
            o,
            begin,
            stop,
            outer_coords,
        }
    }

    /// Each store's accumulator type, and its accumulators set to the
    /// reduction's identity.
    fn reduction_accumulators(&mut self, sum: bool) -> (Vec<Ty>, Vec<Vec<String>>) {
        let k = self.k;
        // Accumulators: in the value's compute type; bools count in f32.
        let acc_tys: Vec<Ty> = k
            .stores
            .iter()
            .map(
                |s| match Ty::of(k.insts[s.value].ty).expect("validated type") {
                    Ty::Pred => Ty::F32,
                    t => t,
                },
            )
            .collect();
        // Per store: LEVELS pairwise partial sums (binary-counter cascade,
        // see `cascade_add`), all zero at the start of a unit; max/min: one
        // accumulator, starting from -inf / +inf.
        let depth = if sum { LEVELS } else { 1 };
        let identity = k.reduce.identity();
        let levels: Vec<Vec<String>> = acc_tys
            .iter()
            .map(|t| {
                (0..depth)
                    .map(|_| {
                        let a = self.f.reg(t.class());
                        self.f.ins(format!(
                            "mov.{} {a}, {}",
                            t.suffix(),
                            values::float_imm(*t, identity)
                        ));
                        a
                    })
                    .collect()
            })
            .collect();
        (acc_tys, levels)
    }

    /// The thread's loop over its elements of the unit's chunk, into the
    /// accumulators `levels`.
    fn reduction_thread_loop(
        &mut self,
        red: &ReductionRegs,
        range: &UnitRange,
        tid64: &str,
        acc_tys: &[Ty],
        levels: &[Vec<String>],
    ) {
        let (p, begin, stop) = (&red.p, &range.begin, &range.stop);
        let outer_coords = &range.outer_coords;
        let trips = self.f.reg(Class::B64);
        self.f.ins(format!("mov.u64 {trips}, 0"));
        let r = self.f.reg(Class::B64);
        self.f.ins(format!("add.u64 {r}, {begin}, {tid64}"));
        // Four elements per trip while they last (independent loads in
        // flight, summed as (v0+v1)+(v2+v3)), then one at a time; each
        // trip's sum goes into the cascade.
        let (wide_top, inner_top, inner_end) = (
            self.f.new_label("inner4"),
            self.f.new_label("inner"),
            self.f.new_label("inner_done"),
        );
        let last = self.f.reg(Class::B64);
        self.f.place_label(&wide_top);
        self.f.ins(format!("add.u64 {last}, {r}, {}", 3 * BLOCK));
        self.f.ins(format!("setp.ge.u64 {p}, {last}, {stop}"));
        self.f.ins(format!("@{p} bra {inner_top}"));
        let mut quads: Vec<Vec<String>> = Vec::new();
        for u in 0..4 {
            let ru = if u == 0 {
                r.clone()
            } else {
                let d = self.f.reg(Class::B64);
                self.f.ins(format!("add.u64 {d}, {r}, {}", u * BLOCK));
                d
            };
            quads.push(self.values_at(&ru, outer_coords, acc_tys));
        }
        let sums: Vec<String> = acc_tys
            .iter()
            .enumerate()
            .map(|(s, t)| {
                let (a, b) = (self.f.reg(t.class()), self.f.reg(t.class()));
                self.combine_into(&a, &quads[0][s], &quads[1][s], *t);
                self.combine_into(&b, &quads[2][s], &quads[3][s], *t);
                self.combine_into(&a, &a, &b, *t);
                a
            })
            .collect();
        self.accumulate(&sums, levels, acc_tys, &trips);
        self.f.ins(format!("add.u64 {r}, {r}, {}", 4 * BLOCK));
        self.f.ins(format!("bra {wide_top}"));
        self.f.place_label(&inner_top);
        self.f.ins(format!("setp.ge.u64 {p}, {r}, {stop}"));
        self.f.ins(format!("@{p} bra {inner_end}"));
        let one = self.values_at(&r, outer_coords, acc_tys);
        self.accumulate(&one, levels, acc_tys, &trips);
        self.f.ins(format!("add.u64 {r}, {r}, {BLOCK}"));
        self.f.ins(format!("bra {inner_top}"));
        self.f.place_label(&inner_end);
    }

    /// The thread's sum of each store, from its accumulators.
    fn reduction_thread_total(&mut self, levels: &[Vec<String>], acc_tys: &[Ty]) -> Vec<String> {
        // The thread's sum: the levels from the lowest up (unused ones are 0).
        acc_tys
            .iter()
            .enumerate()
            .map(|(s, t)| {
                let sfx = t.suffix();
                let a = self.f.reg(t.class());
                self.f.ins(format!("mov.{sfx} {a}, {}", levels[s][0]));
                for lev in &levels[s][1..] {
                    self.combine_into(&a, &a, lev, *t);
                }
                a
            })
            .collect()
    }

    /// The block's sum of each store, valid in thread 0.
    fn reduction_block_combine(
        &mut self,
        red: &ReductionRegs,
        accs: &[String],
        acc_tys: &[Ty],
    ) -> Vec<String> {
        let (tid, lane, warp) = (&red.tid, &red.lane, &red.warp);
        let identity = self.k.reduce.identity();
        // Block sum: shuffle within warps, lane 0s to shared, warp 0 again.
        let smem = self.f.reg(Class::B32);
        self.f.ins(format!("mov.u32 {smem}, red_smem"));
        let lane0 = self.f.reg(Class::Pred);
        self.f.ins(format!("setp.eq.u32 {lane0}, {lane}, 0"));
        for (s, acc) in accs.iter().enumerate() {
            self.warp_sum(acc, acc_tys[s]);
            let a = self.f.reg(Class::B32);
            self.f
                .ins(format!("add.u32 {a}, {warp}, {}", s as u32 * WARPS));
            self.f.ins(format!("mad.lo.u32 {a}, {a}, 8, {smem}"));
            self.f.ins(format!(
                "@{lane0} st.shared.{} [{a}], {acc}",
                acc_tys[s].suffix()
            ));
        }
        self.f.ins("bar.sync 0");
        let first = self.f.reg(Class::Pred);
        self.f.ins(format!("setp.lt.u32 {first}, {tid}, {WARPS}"));
        let mut totals = Vec::new();
        for (s, t) in acc_tys.iter().enumerate() {
            let v = self.f.reg(t.class());
            let a = self.f.reg(Class::B32);
            self.f.ins(format!(
                "mov.{} {v}, {}",
                t.suffix(),
                values::float_imm(*t, identity)
            ));
            self.f
                .ins(format!("add.u32 {a}, {tid}, {}", s as u32 * WARPS));
            self.f.ins(format!("mad.lo.u32 {a}, {a}, 8, {smem}"));
            self.f
                .ins(format!("@{first} ld.shared.{} {v}, [{a}]", t.suffix()));
            self.warp_sum(&v, *t);
            totals.push(v);
        }
        totals
    }

    /// Thread 0 combines each store's block total into output `o`:
    /// atomically when units share an output, else by a plain store.
    fn reduction_write_unit(
        &mut self,
        red: &ReductionRegs,
        o: &str,
        totals: &[String],
        acc_tys: &[Ty],
    ) {
        let k = self.k;
        // Thread 0 writes; the barrier keeps the next unit off shared memory
        // until every warp has read it.
        let skip = self.f.new_label("not_first");
        let t0 = self.f.reg(Class::Pred);
        self.f.ins(format!("setp.ne.u32 {t0}, {}, 0", red.tid));
        self.f.ins(format!("@{t0} bra {skip}"));
        for (s, st) in k.stores.iter().enumerate() {
            let total = Val {
                ty: acc_tys[s],
                reg: totals[s].clone(),
            };
            if red.atomics {
                let dtype = k.args[st.arg].dtype;
                let base = self.bases[st.arg].clone();
                let addr = self.address(&base, Some(o), dtype.size_bytes());
                if red.sum {
                    let old = self.f.reg(acc_tys[s].class());
                    let sfx = acc_tys[s].suffix();
                    self.f.ins(format!(
                        "atom.global.add.{sfx} {old}, [{addr}], {}",
                        total.reg
                    ));
                } else {
                    self.atomic_combine(&addr, &total);
                }
            } else {
                let value_ty = k.insts[st.value].ty;
                let v = convert(
                    &mut self.f,
                    &total,
                    Ty::of(value_ty).expect("validated type"),
                );
                let v = values::round_to(&mut self.f, v, value_ty);
                self.store(st.arg, o, &v);
            }
        }
        self.f.place_label(&skip);
    }

    /// `d = a ⊕ b` in float type `t`, ⊕ the kernel's reduction (`d` may be
    /// `a`): an IEEE addition, or the NaN-propagating max/min of `ops`.
    fn combine_into(&mut self, d: &str, a: &str, b: &str, t: Ty) {
        let sfx = t.suffix();
        match self.k.reduce {
            Reduce::Sum => self.f.ins(format!("add.rn.{sfx} {d}, {a}, {b}")),
            r => {
                let (a, b) = (
                    Val {
                        ty: t,
                        reg: a.to_string(),
                    },
                    Val {
                        ty: t,
                        reg: b.to_string(),
                    },
                );
                let v = ops::binary(&mut self.f, r.op(), &a, &b, t);
                self.f.ins(format!("mov.{sfx} {d}, {}", v.reg));
            }
        }
    }

    /// Fold one trip's values into the thread's accumulators: the pairwise
    /// cascade for sums, one max/min otherwise.
    fn accumulate(&mut self, vals: &[String], levels: &[Vec<String>], tys: &[Ty], trips: &str) {
        if self.k.reduce == Reduce::Sum {
            return self.cascade_add(vals, levels, tys, trips);
        }
        for (s, t) in tys.iter().enumerate() {
            self.combine_into(&levels[s][0], &levels[s][0], &vals[s], *t);
        }
    }

    /// `[addr] = [addr] ⊕ v` atomically for max/min and products, which
    /// have no float atomic: read the element, combine, and `atom.cas` the bits until no
    /// other block changed them in between. Skipping the swap when the
    /// combination leaves the bits unchanged is sound because an element
    /// only moves up the order -inf < … < +inf < NaN (max; min mirrored), so
    /// the value read is never past the current one.
    fn atomic_combine(&mut self, addr: &str, v: &Val) {
        let t = v.ty;
        let (class, bits) = match t {
            Ty::F64 => (Class::B64, "b64"),
            _ => (Class::B32, "b32"),
        };
        let (seen, new_bits, old) = (self.f.reg(class), self.f.reg(class), self.f.reg(class));
        let (cur, next) = (self.f.reg(t.class()), self.f.reg(t.class()));
        let p = self.f.reg(Class::Pred);
        let (top, done) = (self.f.new_label("cas"), self.f.new_label("cas_done"));
        self.f
            .ins(format!("ld.volatile.global.{bits} {seen}, [{addr}]"));
        self.f.place_label(&top);
        self.f.ins(format!("mov.{bits} {cur}, {seen}"));
        self.combine_into(&next, &cur, &v.reg, t);
        self.f.ins(format!("mov.{bits} {new_bits}, {next}"));
        // (Products always swap: the order argument is max/min's.)
        if self.k.reduce != Reduce::Prod {
            self.f
                .ins(format!("setp.eq.{bits} {p}, {new_bits}, {seen}"));
            self.f.ins(format!("@{p} bra {done}"));
        }
        self.f.ins(format!(
            "atom.global.cas.{bits} {old}, [{addr}], {seen}, {new_bits}"
        ));
        self.f.ins(format!("setp.ne.{bits} {p}, {old}, {seen}"));
        self.f.ins(format!("mov.{bits} {seen}, {old}"));
        self.f.ins(format!("@{p} bra {top}"));
        self.f.place_label(&done);
    }

    /// The stored values at reduced index `r`, in the accumulator types.
    fn values_at(&mut self, r: &str, outer_coords: &[Coord], acc_tys: &[Ty]) -> Vec<String> {
        let (outer, rank) = (self.k.outer_dims(), self.k.domain.len());
        let mut coords = outer_coords.to_vec();
        coords.extend(self.decode(r, outer..rank));
        let vals = self.eval(&coords);
        self.k
            .stores
            .iter()
            .enumerate()
            .map(|(s, st)| convert(&mut self.f, &vals[st.value], acc_tys[s]).reg)
            .collect()
    }

    /// Add one trip's sums `vals` into the pairwise cascade: `levels[s][l]`
    /// holds the sum of 2^l trips when bit `l` of `trips` is set, else 0.
    /// Like incrementing a binary counter, the new value is combined with
    /// the set levels from the bottom (`level + carry`, which empties the
    /// level) until it lands in the first empty one; past `LEVELS - 1` the
    /// top level accumulates sequentially. (Model: `cascade_model`.)
    fn cascade_add(&mut self, vals: &[String], levels: &[Vec<String>], tys: &[Ty], trips: &str) {
        let done = self.f.new_label("cascade_done");
        let (bit, empty) = (self.f.reg(Class::B64), self.f.reg(Class::Pred));
        let carry: Vec<String> = vals
            .iter()
            .zip(tys)
            .map(|(v, t)| {
                let c = self.f.reg(t.class());
                self.f.ins(format!("mov.{} {c}, {v}", t.suffix()));
                c
            })
            .collect();
        // `l` is both the level and the counter bit.
        #[allow(clippy::needless_range_loop)]
        for l in 0..LEVELS - 1 {
            self.f.ins(format!("and.b64 {bit}, {trips}, {}", 1u64 << l));
            self.f.ins(format!("setp.eq.u64 {empty}, {bit}, 0"));
            for (s, t) in tys.iter().enumerate() {
                self.f.ins(format!(
                    "@{empty} mov.{} {}, {}",
                    t.suffix(),
                    levels[s][l],
                    carry[s]
                ));
            }
            self.f.ins(format!("@{empty} bra {done}"));
            for (s, t) in tys.iter().enumerate() {
                let sfx = t.suffix();
                self.f.ins(format!(
                    "add.rn.{sfx} {0}, {1}, {0}",
                    carry[s], levels[s][l]
                ));
                self.f.ins(format!(
                    "mov.{sfx} {}, {}",
                    levels[s][l],
                    values::float_imm(*t, 0.0)
                ));
            }
        }
        for (s, t) in tys.iter().enumerate() {
            let top = &levels[s][LEVELS - 1];
            self.f
                .ins(format!("add.rn.{} {top}, {top}, {}", t.suffix(), carry[s]));
        }
        self.f.place_label(&done);
        self.f.ins(format!("add.u64 {trips}, {trips}, 1"));
    }

    /// Combine `v` across the warp into lane 0 (`shfl.sync.down`; an f64
    /// moves as two 32-bit halves): a sum, or max/min.
    fn warp_sum(&mut self, v: &str, ty: Ty) {
        for off in [16, 8, 4, 2, 1] {
            match ty {
                Ty::F64 => {
                    let (lo, hi) = (self.f.reg(Class::B32), self.f.reg(Class::B32));
                    let o = self.f.reg(Class::F64);
                    self.f.ins(format!("mov.b64 {{{lo}, {hi}}}, {v}"));
                    self.f
                        .ins(format!("shfl.sync.down.b32 {lo}, {lo}, {off}, 31, -1"));
                    self.f
                        .ins(format!("shfl.sync.down.b32 {hi}, {hi}, {off}, 31, -1"));
                    self.f.ins(format!("mov.b64 {o}, {{{lo}, {hi}}}"));
                    self.combine_into(v, v, &o, ty);
                }
                _ => {
                    let (b, o) = (self.f.reg(Class::B32), self.f.reg(Class::F32));
                    self.f.ins(format!("mov.b32 {b}, {v}"));
                    self.f
                        .ins(format!("shfl.sync.down.b32 {b}, {b}, {off}, 31, -1"));
                    self.f.ins(format!("mov.b32 {o}, {b}"));
                    self.combine_into(v, v, &o, ty);
                }
            }
        }
    }
}

/// Model of the summation order of one reduction output (`reduction`,
/// `cascade_add`, `warp_sum`): the same chunks, trips, cascade, shuffle tree
/// and atomics (taken in unit order; on the device their order varies,
/// which the error bound in the crate docs covers).
#[cfg(test)]
pub(crate) mod model {
    use super::LEVELS;
    use crate::launch::{BLOCK, MIN_CHUNK, WARPS};
    use std::ops::Add;

    /// `n` elements `x(i)` reduced into one output by a grid of `grid`
    /// blocks, in the accumulator type `T` (f32 or f64).
    pub(crate) fn sum<T>(n: u64, grid: u64, x: impl Fn(u64) -> T) -> T
    where
        T: Copy + Add<Output = T> + Default,
    {
        let n_out = 1u64;
        let chunks = n.div_ceil(MIN_CHUNK).min(grid.div_ceil(n_out)).max(1);
        let chunk_len = n.div_ceil(chunks).div_ceil(MIN_CHUNK) * MIN_CHUNK;
        let mut out = T::default();
        for c in 0..chunks {
            let begin = c * chunk_len;
            let stop = (begin + chunk_len).min(n);
            let threads: Vec<T> = (0..BLOCK as u64)
                .map(|tid| thread_sum(begin + tid, stop, &x))
                .collect();
            let warps: Vec<T> = threads.chunks(32).map(warp_sum).collect();
            let lanes: Vec<T> = (0..32)
                .map(|l| {
                    if l < WARPS as usize {
                        warps[l]
                    } else {
                        T::default()
                    }
                })
                .collect();
            // atom.global.add: old + partial.
            out = out + warp_sum(&lanes);
        }
        out
    }

    fn thread_sum<T>(mut r: u64, stop: u64, x: &impl Fn(u64) -> T) -> T
    where
        T: Copy + Add<Output = T> + Default,
    {
        let b = BLOCK as u64;
        let mut levels = [T::default(); LEVELS];
        let mut trips = 0u64;
        while r + 3 * b < stop {
            let v = (x(r) + x(r + b)) + (x(r + 2 * b) + x(r + 3 * b));
            cascade(&mut levels, &mut trips, v);
            r += 4 * b;
        }
        while r < stop {
            cascade(&mut levels, &mut trips, x(r));
            r += b;
        }
        let mut a = levels[0];
        for lev in &levels[1..] {
            a = a + *lev;
        }
        a
    }

    fn cascade<T>(levels: &mut [T; LEVELS], trips: &mut u64, v: T)
    where
        T: Copy + Add<Output = T> + Default,
    {
        let mut carry = v;
        let mut landed = false;
        for (l, lev) in levels.iter_mut().enumerate().take(LEVELS - 1) {
            if *trips & (1 << l) == 0 {
                *lev = carry;
                landed = true;
                break;
            }
            carry = *lev + carry;
            *lev = T::default();
        }
        if !landed {
            levels[LEVELS - 1] = levels[LEVELS - 1] + carry;
        }
        *trips += 1;
    }

    /// `shfl.sync.down` by 16, 8, 4, 2, 1 (a lane past 31 reads its own
    /// value), then lane 0.
    fn warp_sum<T>(v: &[T]) -> T
    where
        T: Copy + Add<Output = T> + Default,
    {
        let mut v = v.to_vec();
        for off in [16, 8, 4, 2, 1] {
            v = (0..32)
                .map(|l| v[l] + if l + off < 32 { v[l + off] } else { v[l] })
                .collect();
        }
        v[0]
    }

    #[cfg(test)]
    mod tests {
        use super::sum;

        /// An H200 runs 132 SMs × 8 blocks.
        const GRID: u64 = 1056;

        #[test]
        fn f32_sum_of_2_pow_25_ones_is_exact() {
            for grid in [1, 7, GRID] {
                assert_eq!(sum(1 << 25, grid, |_| 1.0f32), 33_554_432.0, "{grid}");
            }
            // Lengths that leave remainders at every level.
            for n in [1u64, 1000, 1025, 300_001, (1 << 22) + 3] {
                assert_eq!(sum(n, GRID, |_| 1.0f32), n as f32, "{n}");
            }
        }

        /// 2^29 ones: one grid (about 10 s unoptimized).
        #[test]
        #[ignore]
        fn f32_sum_of_2_pow_29_ones_is_exact() {
            assert_eq!(sum(1 << 29, GRID, |_| 1.0f32), 536_870_912.0);
        }

        /// Random values in [0, 1): the error against an f64 sum (exact to
        /// ~2^-53 relative here) stays within the documented bound and far
        /// below what sequential f32 summation gives.
        #[test]
        fn f32_random_sum_error_is_small() {
            let n: u64 = 1 << 24;
            let x = |i: u64| {
                let mut z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                (z >> 40) as f32 / (1u64 << 24) as f32
            };
            let exact: f64 = (0..n).map(|i| x(i) as f64).sum();
            let seq: f32 = (0..n).map(x).sum();
            for grid in [1, GRID] {
                let got = sum(n, grid, x) as f64;
                let rel = (got - exact).abs() / exact;
                let seq_rel = (seq as f64 - exact).abs() / exact;
                println!("grid {grid}: relative error {rel:.2e} (sequential f32: {seq_rel:.2e})");
                // The bound of the crate docs: (depth)·2^-24 with depth
                // 2 + 2·log2(trips + 1) + 8 + (chunks - 1).
                let chunks = n.div_ceil(1024).min(grid) as f64;
                let trips = (n as f64 / chunks / 256.0 / 4.0).ceil();
                let depth = 2.0 + 2.0 * (trips + 1.0).log2().ceil() + 8.0 + (chunks - 1.0);
                assert!(rel <= depth * 2f64.powi(-24), "{rel} > bound");
                assert!(rel < seq_rel / 10.0, "{rel} vs sequential {seq_rel}");
            }
        }

        #[test]
        fn f64_sum_matches_exact_integer_sum() {
            // Integers below 2^20: every f64 partial sum is exact.
            let n = 3_000_017u64;
            let x = |i: u64| ((i * 7919) % 1_000_003) as f64;
            let exact: u64 = (0..n).map(|i| (i * 7919) % 1_000_003).sum();
            assert_eq!(sum(n, 1056, x), exact as f64);
        }
    }
}
