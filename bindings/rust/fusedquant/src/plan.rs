//! Plans (`fqPlan_t`): a problem validated once, executed many times (each execution checks only its buffers),
//! and [`PlanCache`], which keeps the plans of the problems a caller meets, keyed by what defines them.
use crate::elements::Element;
use crate::enums::*;
use crate::objects::{check_slice, invalid, read_name, Handle, QuantDesc, TensorLayout};
use crate::{check, Result};
use fusedquant_sys as sys;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::mem::{size_of, size_of_val};
use std::ptr;
use std::sync::{Arc, Mutex};

/// A quantization problem resolved once (`fqPlan_t`): [`Plan::new`] checks the handle, descriptor and layouts as
/// [`Handle::quantize`] would and chooses the kernel variant; [`Plan::quantize`] then checks only the buffers.
/// The plan keeps copies of what it needs: it outlives the objects it was made from and does not see later
/// changes to them. Several threads may run one plan at once.
#[derive(Debug)]
pub struct Plan {
    raw: sys::fqPlan_t,
    input: TensorLayout, // copies of the layouts it was made for: the slices are checked against them
    output: TensorLayout,
    backend: Backend,
    workspace_bytes: usize,
    scale_bytes: usize,
    columnwise_scale_bytes: usize,
    scale_element: (Option<DataType>, usize), // the scale type and its storage element's bytes
}

// A plan never changes after creation and the C API lets threads execute one at once (fusedquant.h, "Plans").
unsafe impl Send for Plan {}
unsafe impl Sync for Plan {}

impl Drop for Plan {
    fn drop(&mut self) {
        unsafe { sys::fqPlanDestroy(self.raw) };
    }
}

impl Plan {
    /// The plan of `desc` for `input` -> `output` on `handle`, or the error [`Handle::quantize`] would give for
    /// these objects. A descriptor with a pointer attribute set is refused (`InvalidValue`): the plan would keep
    /// the pointer past the descriptor's life; [`Plan::with_pointers`] takes it.
    pub fn new(handle: &Handle, desc: &QuantDesc, input: &TensorLayout, output: &TensorLayout) -> Result<Plan> {
        if desc_bytes(desc)?.1 {
            return Err(invalid(
                "desc: a pointer attribute is set, which the plan would keep; use Plan::with_pointers".into(),
            ));
        }
        // SAFETY: no pointer attribute is set.
        unsafe { Self::with_pointers(handle, desc, input, output) }
    }

    /// [`Plan::new`] for a descriptor with pointer attributes (static scale, routing probabilities, MoE arrays,
    /// columnwise outputs, global amax), which the plan keeps.
    ///
    /// # Safety
    /// Every pointer attribute of `desc` stays valid, as its setter requires, for every execution of the plan.
    pub unsafe fn with_pointers(
        handle: &Handle,
        desc: &QuantDesc,
        input: &TensorLayout,
        output: &TensorLayout,
    ) -> Result<Plan> {
        let mut raw = ptr::null_mut();
        check(sys::fqPlanCreate(&mut raw, handle.as_raw(), desc.as_raw(), input.as_raw(), output.as_raw()))?;
        let copy = |l: &TensorLayout| TensorLayout::new(l.dtype()?, l.rows()?, l.cols()?, l.ld()?);
        let mut plan = Plan {
            raw,
            input: copy(input)?,
            output: copy(output)?,
            backend: handle.backend()?,
            workspace_bytes: 0,
            scale_bytes: 0,
            columnwise_scale_bytes: 0,
            scale_element: (None, 0),
        };
        plan.workspace_bytes = plan.fact(PlanAttr::WorkspaceSize)?;
        plan.scale_bytes = plan.fact(PlanAttr::ScaleBufferSize)?;
        plan.columnwise_scale_bytes = plan.fact(PlanAttr::ColumnwiseScaleBufferSize)?;
        let (rows, cols) = (output.rows()?, output.cols()?);
        if plan.scale_bytes > 0 {
            let dtype = desc.scale_buffer_info(rows, cols, Output::Rowwise, ScaleInfo::Dtype)?;
            let element = desc.scale_buffer_info(rows, cols, Output::Rowwise, ScaleInfo::ElementBytes)?;
            plan.scale_element = (Some(DataType::from(dtype as i32)), element as usize);
        }
        Ok(plan)
    }

    fn fact(&self, attr: PlanAttr) -> Result<usize> {
        let mut value: i64 = 0;
        let mut written = 0;
        let buf = (&mut value as *mut i64).cast::<c_void>();
        check(unsafe { sys::fqPlanGetAttribute(self.raw, attr.into(), buf, size_of::<i64>(), &mut written) })?;
        Ok(value as usize)
    }

    /// The C object, for calls through [`crate::ffi`]; it stays owned by `self`.
    pub fn as_raw(&self) -> sys::fqPlan_t {
        self.raw
    }
    /// Bytes of the workspace an execution needs (`FQ_PLAN_WORKSPACE_SIZE`).
    pub fn workspace_size(&self) -> usize {
        self.workspace_bytes
    }
    /// Bytes an execution writes to `scales` (`FQ_PLAN_SCALE_BUFFER_SIZE`).
    pub fn scale_buffer_size(&self) -> usize {
        self.scale_bytes
    }
    /// Bytes written to the descriptor's columnwise scales (`FQ_PLAN_COLUMNWISE_SCALE_BUFFER_SIZE`).
    pub fn columnwise_scale_buffer_size(&self) -> usize {
        self.columnwise_scale_bytes
    }
    /// The kernel variant it runs for 16-byte-aligned buffers.
    pub fn variant_name(&self) -> Result<String> {
        read_name(|buf, cap| unsafe { sys::fqPlanGetVariantName(self.raw, buf, cap) })
    }

    /// Runs the plan on host slices (a host-backend plan), checked as [`Handle::quantize`] checks them: each
    /// slice's element type and size against its layout, and that it holds what its layout needs. Any workspace
    /// is allocated here.
    pub fn quantize<I: Element, O: Element, S: Element>(
        &self,
        input: &[I],
        output: &mut [O],
        scales: &mut [S],
    ) -> Result<()> {
        if self.backend != Backend::Host {
            return Err(invalid("plan: quantize takes host slices; on a CUDA handle use execute_raw".into()));
        }
        check_slice("input", &self.input, input)?;
        if self.scale_bytes > 0 {
            check_slice("output", &self.output, output)?;
            let (dtype, element) = self.scale_element;
            crate::objects::check_type("scales", S::DTYPE, dtype.unwrap_or(DataType::Unknown(-1)))?;
            if size_of::<S>() != element {
                return Err(invalid(format!(
                    "scales: slice elements of {} bytes for {element}-byte scales",
                    size_of::<S>()
                )));
            }
        }
        let mut workspace = vec![0u8; self.workspace_bytes];
        // SAFETY: host memory whose sizes fqPlanExecute checks (scales) or which were checked above; the slices
        // outlive this synchronous call.
        unsafe {
            self.execute_raw(
                input.as_ptr().cast(),
                output.as_mut_ptr().cast(),
                scales.as_mut_ptr().cast(),
                size_of_val(scales),
                workspace.as_mut_ptr().cast(),
                workspace.len(),
                ptr::null_mut(),
            )
        }
    }

    /// `fqPlanExecute` on raw pointers: on a CUDA handle, device pointers and work enqueued on `stream`;
    /// synchronous on the host backend.
    ///
    /// # Safety
    /// As [`Handle::quantize_raw`]: `input` and `output` hold the tensors the plan's layouts describe, `scales`
    /// `scales_bytes` bytes and `workspace` `workspace_bytes` bytes, in memory of the handle's kind, valid until
    /// the work on `stream` completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute_raw(
        &self,
        input: *const c_void,
        output: *mut c_void,
        scales: *mut c_void,
        scales_bytes: usize,
        workspace: *mut c_void,
        workspace_bytes: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        check(sys::fqPlanExecute(
            self.raw,
            input,
            output,
            scales,
            scales_bytes,
            workspace,
            workspace_bytes,
            stream.cast(),
        ))
    }
}

/// Every descriptor attribute's bytes, in header order, and whether a pointer attribute is set (the only
/// attributes of pointer size on 64-bit targets, where the others are 4-byte ints and floats).
fn desc_bytes(desc: &QuantDesc) -> Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::with_capacity(40 * 4);
    let mut pointer_set = false;
    for &attr in QuantDescAttr::KNOWN {
        let mut buf = [0u8; 8];
        let mut size = 0;
        let raw = desc.as_raw();
        check(unsafe { sys::fqQuantDescGetAttribute(raw, attr.into(), ptr::null_mut(), 0, &mut size) })?;
        let size = size.min(buf.len());
        let mut written = 0;
        let out = buf.as_mut_ptr().cast::<c_void>();
        check(unsafe { sys::fqQuantDescGetAttribute(raw, attr.into(), out, size, &mut written) })?;
        pointer_set |= size == size_of::<*const c_void>() && size != 4 && buf[..size].iter().any(|&b| b != 0);
        bytes.extend_from_slice(&buf[..size]);
    }
    Ok((bytes, pointer_set))
}

/// The plans of the problems a caller meets, at most `capacity` (the least recently used goes first), keyed by
/// what defines a plan: the handle and its settable attributes, every descriptor attribute, and both layouts'
/// types, shapes and row strides. A descriptor with a pointer attribute set is refused, as by [`Plan::new`].
/// Reading the key takes one library query per attribute (about fifty); a caller that keeps its objects should
/// keep their [`Plan`] instead.
#[derive(Debug)]
pub struct PlanCache {
    capacity: usize,
    plans: Mutex<VecDeque<(Vec<u8>, Arc<Plan>)>>,
}

impl PlanCache {
    /// An empty cache of at most `capacity` plans (at least 1).
    pub fn new(capacity: usize) -> Self {
        PlanCache { capacity: capacity.max(1), plans: Mutex::new(VecDeque::new()) }
    }

    /// The plan of this problem: the cached one, or a new one (then cached).
    pub fn plan(
        &self,
        handle: &Handle,
        desc: &QuantDesc,
        input: &TensorLayout,
        output: &TensorLayout,
    ) -> Result<Arc<Plan>> {
        let (mut key, pointer_set) = desc_bytes(desc)?;
        if pointer_set {
            return Err(invalid(
                "desc: a pointer attribute is set, which a cached plan would keep; use Plan::with_pointers".into(),
            ));
        }
        key.extend_from_slice(&(handle.as_raw() as usize).to_le_bytes()); // never names another handle
        key.push(handle.allow_pdl()? as u8);
        for knob in [handle.variant()?, handle.wide_tile_min()?] {
            key.extend_from_slice(&knob.map_or(-1, |v| v as i64).to_le_bytes());
        }
        for layout in [input, output] {
            key.extend_from_slice(&i32::from(layout.dtype()?).to_le_bytes());
            for n in [layout.rows()?, layout.cols()?, layout.ld()?] {
                key.extend_from_slice(&n.to_le_bytes());
            }
        }
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = plans.iter().position(|(k, _)| *k == key) {
            let entry = plans.remove(i).expect("position is in range");
            let plan = Arc::clone(&entry.1);
            plans.push_back(entry);
            return Ok(plan);
        }
        let plan = Arc::new(Plan::new(handle, desc, input, output)?);
        if plans.len() == self.capacity {
            plans.pop_front();
        }
        plans.push_back((key, Arc::clone(&plan)));
        Ok(plan)
    }

    /// Plans held now.
    pub fn len(&self) -> usize {
        self.plans.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
    /// Whether it holds no plan.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
