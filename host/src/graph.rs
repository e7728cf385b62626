//! CUDA graphs: a stream's launch sequence captured once, instantiated, and
//! replayed with one call, and what the captured graph holds (node types,
//! the cooperative attribute of each kernel node), with a DOT file of it on
//! request. The driver calls are cudarc's raw ones (`sys`): cudarc's own
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
}

impl Node {
    /// Whether this is a kernel node.
    pub fn is_kernel(&self) -> bool {
        self.kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL
    }
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

    /// The graph's nodes, each with its type and, for kernel nodes, the
    /// cooperative attribute (`CU_LAUNCH_ATTRIBUTE_COOPERATIVE`).
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
                let cooperative = if kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
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
                Ok(Node { kind, cooperative })
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
