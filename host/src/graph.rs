//! CUDA graphs: a stream's launch sequence captured once, instantiated, and
//! replayed with one call, and what the captured graph holds (each node's
//! type; for each kernel node its function, launch shape, cooperative
//! attribute and the function's registers and shared and local bytes), with
//! a DOT file of it on request. The driver calls are cudarc's raw ones (`sys`): cudarc's own
//! `end_capture` instantiates at once, and capture and instantiation are
//! timed apart here.

use std::ffi::CString;
use std::path::Path;
use std::time::Instant;

use cudarc::driver::sys;

use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;

/// A captured and instantiated graph. Dropping it destroys both.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    stream: sys::CUstream,
    /// Host microseconds from the start of capture to its end (the launch
    /// calls recorded, nothing run).
    pub capture_us: f64,
    /// Host microseconds to instantiate the graph.
    pub instantiate_us: f64,
}

/// One node of a captured graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// The driver's node type (`CU_GRAPH_NODE_TYPE_*`).
    pub kind: sys::CUgraphNodeType,
    /// For a kernel node, whether its cooperative launch attribute is set;
    /// `None` for other nodes.
    pub cooperative: Option<bool>,
    /// For a kernel node, what it launches; `None` for other nodes.
    pub kernel: Option<KernelNode>,
}

/// What a kernel node launches: its parameters as the driver recorded them
/// (`cuGraphKernelNodeGetParams`) and the function's resources
/// (`cuFuncGetAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelNode {
    /// The function handle the node launches (compare it with
    /// `CudaFunction::cu_function` to name the kernel).
    pub function: sys::CUfunction,
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared_bytes: u32,
    /// Registers per thread (`CU_FUNC_ATTRIBUTE_NUM_REGS`).
    pub registers: i32,
    /// Static shared memory per block, bytes
    /// (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`).
    pub static_shared_bytes: i32,
    /// Local memory per thread, bytes (`CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`).
    pub local_bytes: i32,
}

impl Node {
    /// Whether this is a kernel node.
    pub fn is_kernel(&self) -> bool {
        self.kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL
    }

    /// The node's type in the driver's words, lower case without the
    /// `CU_GRAPH_NODE_TYPE_` prefix: `kernel`, `memcpy`, `memset`, `host`,
    /// `graph`, `empty`, `wait_event`, ...
    pub fn type_name(&self) -> String {
        node_type_name(self.kind)
    }
}

/// `kind` in the driver's words, lower case without the
/// `CU_GRAPH_NODE_TYPE_` prefix (`CU_GRAPH_NODE_TYPE_KERNEL` -> `kernel`).
pub fn node_type_name(kind: sys::CUgraphNodeType) -> String {
    let name = format!("{kind:?}");
    name.strip_prefix("CU_GRAPH_NODE_TYPE_")
        .unwrap_or(&name)
        .to_ascii_lowercase()
}

/// Reads one of `f`'s attributes.
fn function_attribute(f: sys::CUfunction, attribute: sys::CUfunction_attribute) -> Result<i32> {
    let mut value = 0i32;
    // SAFETY: `f` is a kernel node's function, alive while its module is
    // (the graph's owner keeps it); writes one int.
    unsafe { sys::cuFuncGetAttribute(&mut value, attribute, f) }
        .result()
        .call("cuFuncGetAttribute")?;
    Ok(value)
}

/// A kernel node's launch parameters and its function's resources.
fn kernel_node(node: sys::CUgraphNode) -> Result<KernelNode> {
    // SAFETY: a zeroed parameter struct (null pointers, zero sizes) is a
    // valid out-parameter.
    let mut p: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
    // SAFETY: a kernel node of a live graph; the driver writes `p`.
    unsafe { sys::cuGraphKernelNodeGetParams_v2(node, &mut p) }
        .result()
        .call("cuGraphKernelNodeGetParams")?;
    if p.func.is_null() {
        return Err(Error::Driver {
            call: "cuGraphKernelNodeGetParams (a kernel node without a function handle)",
            source: cudarc::driver::DriverError(sys::CUresult::CUDA_ERROR_INVALID_HANDLE),
        });
    }
    use sys::CUfunction_attribute as A;
    Ok(KernelNode {
        function: p.func,
        grid: (p.gridDimX, p.gridDimY, p.gridDimZ),
        block: (p.blockDimX, p.blockDimY, p.blockDimZ),
        dynamic_shared_bytes: p.sharedMemBytes,
        registers: function_attribute(p.func, A::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        static_shared_bytes: function_attribute(p.func, A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        local_bytes: function_attribute(p.func, A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
    })
}

/// Captures what `enqueue` puts on the GPU's stream (thread-local capture
/// mode: nothing runs), then instantiates it.
///
/// # Errors
/// An error from `enqueue` (capture is ended and the partial graph dropped
/// first, so the stream is usable again); a driver error from capture or
/// instantiation.
pub fn capture(gpu: &Gpu, enqueue: impl FnOnce() -> Result<()>) -> Result<Graph> {
    let stream = gpu.stream.cu_stream();
    let started = Instant::now();
    gpu.stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .call("cuStreamBeginCapture")?;
    let recorded = enqueue();
    // SAFETY: ends the capture begun above on this stream.
    let ended = unsafe { cudarc::driver::result::stream::end_capture(stream) };
    let capture_us = started.elapsed().as_secs_f64() * 1e6;
    let graph = match (recorded, ended) {
        (Err(e), Ok(g)) => {
            if !g.is_null() {
                // SAFETY: a graph this capture made and nothing else holds.
                unsafe { sys::cuGraphDestroy(g) };
            }
            return Err(e);
        }
        (Err(e), Err(_)) => return Err(e),
        (Ok(()), ended) => ended.call("cuStreamEndCapture")?,
    };
    if graph.is_null() {
        return Err(Error::Driver {
            call: "cuStreamEndCapture (no graph captured)",
            source: cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
            ),
        });
    }
    let started = Instant::now();
    // SAFETY: `graph` is the valid graph just captured.
    let exec = match unsafe {
        cudarc::driver::result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0))
    } {
        Ok(exec) => exec,
        Err(source) => {
            // SAFETY: as above.
            unsafe { sys::cuGraphDestroy(graph) };
            return Err(Error::Driver {
                call: "cuGraphInstantiateWithFlags",
                source,
            });
        }
    };
    let instantiate_us = started.elapsed().as_secs_f64() * 1e6;
    Ok(Graph {
        graph,
        exec,
        stream,
        capture_us,
        instantiate_us,
    })
}

impl Graph {
    /// Enqueues one replay of the whole graph on the stream it was captured
    /// from.
    pub fn launch(&self) -> Result<()> {
        // SAFETY: both handles are alive while `self` is.
        unsafe { sys::cuGraphLaunch(self.exec, self.stream) }
            .result()
            .call("cuGraphLaunch")
    }

    /// The graph's nodes, in the driver's order, each with its type and,
    /// for kernel nodes, the cooperative attribute
    /// (`CU_LAUNCH_ATTRIBUTE_COOPERATIVE`), the launch parameters and the
    /// function's registers and shared and local bytes.
    pub fn nodes(&self) -> Result<Vec<Node>> {
        let mut count = 0usize;
        // SAFETY: a null array asks for the count only.
        unsafe { sys::cuGraphGetNodes(self.graph, std::ptr::null_mut(), &mut count) }
            .result()
            .call("cuGraphGetNodes")?;
        let mut nodes: Vec<sys::CUgraphNode> = vec![std::ptr::null_mut(); count];
        // SAFETY: `nodes` has room for `count` handles.
        unsafe { sys::cuGraphGetNodes(self.graph, nodes.as_mut_ptr(), &mut count) }
            .result()
            .call("cuGraphGetNodes")?;
        nodes.truncate(count);
        nodes
            .into_iter()
            .map(|node| {
                let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
                // SAFETY: `node` belongs to the live graph; writes one enum.
                unsafe { sys::cuGraphNodeGetType(node, &mut kind) }
                    .result()
                    .call("cuGraphNodeGetType")?;
                let is_kernel = kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
                let cooperative = if is_kernel {
                    // SAFETY: a zeroed union is a valid out-parameter.
                    let mut value: sys::CUkernelNodeAttrValue = unsafe { std::mem::zeroed() };
                    // SAFETY: a kernel node of the live graph; writes the union.
                    unsafe {
                        sys::cuGraphKernelNodeGetAttribute(
                            node,
                            sys::CUkernelNodeAttrID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
                            &mut value,
                        )
                    }
                    .result()
                    .call("cuGraphKernelNodeGetAttribute")?;
                    // SAFETY: the driver wrote the `cooperative` member.
                    Some(unsafe { value.cooperative } != 0)
                } else {
                    None
                };
                let kernel = if is_kernel {
                    Some(kernel_node(node)?)
                } else {
                    None
                };
                Ok(Node {
                    kind,
                    cooperative,
                    kernel,
                })
            })
            .collect()
    }

    /// Writes the graph as a Graphviz DOT file (verbose: every node's
    /// launch parameters), `cuGraphDebugDotPrint`.
    ///
    /// # Errors
    /// [`Error::File`] for a path with a NUL byte, or a file the driver
    /// cannot write.
    pub fn write_dot(&self, path: &Path) -> Result<()> {
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|_| {
            Error::file(
                path,
                "a path with a NUL byte cannot be handed to the driver",
            )
        })?;
        // SAFETY: a live graph and a NUL-terminated path.
        unsafe {
            sys::cuGraphDebugDotPrint(
                self.graph,
                c.as_ptr(),
                sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE as u32,
            )
        }
        .result()
        .map_err(|e| {
            Error::file(
                path,
                format!("cuGraphDebugDotPrint could not write it ({:?})", e.0),
            )
        })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: both handles were created by `capture` and are destroyed
        // once; a replay still in flight is finished by the driver first.
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}
