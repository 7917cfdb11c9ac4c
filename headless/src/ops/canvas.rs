//! The canvas operations: `canvas_list`, `canvas_select`, `canvas_move`, `canvas_resize`,
//! `canvas_group`, `sticky_open` and `artifact_open`.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use termsprawl_protocol::args::{
    ArtifactOpenArgs, ArtifactView, CanvasGroupArgs, CanvasMoveArgs, CanvasResizeArgs,
    CanvasSelectArgs, StickyOpenArgs,
};
use termsprawl_protocol::results::{CanvasGroupResult, CanvasSelectResult, NodeResult};
use termsprawl_transport::server::Caller;

use crate::canvas::{Node, NodeKind};
use crate::engine::Engine;
use crate::error::{ToolError, messages};
use crate::ops::answer;

pub(super) async fn list(engine: &Engine, caller: &Caller) -> Result<Value, ToolError> {
    let running = engine.terminals().session_names().await.unwrap_or_default();
    engine.with_project(caller.project_id(), |project| project.list_value(&running))
}

pub(super) fn select(
    engine: &Engine,
    caller: &Caller,
    args: &CanvasSelectArgs,
) -> Result<Value, ToolError> {
    let ids = engine.mutate(caller.project_id(), |project| project.select(&args.node_ids))?;
    Ok(answer(&CanvasSelectResult { node_ids: ids }))
}

pub(super) fn move_node(
    engine: &Engine,
    caller: &Caller,
    args: &CanvasMoveArgs,
) -> Result<Value, ToolError> {
    engine
        .mutate(caller.project_id(), |project| project.move_node(&args.node_id, args.x, args.y))?;
    Ok(answer(&NodeResult { node_id: args.node_id.clone() }))
}

pub(super) fn resize(
    engine: &Engine,
    caller: &Caller,
    args: &CanvasResizeArgs,
) -> Result<Value, ToolError> {
    engine.mutate(caller.project_id(), |project| {
        project.resize(&args.node_id, args.width, args.height)
    })?;
    Ok(answer(&NodeResult { node_id: args.node_id.clone() }))
}

pub(super) fn group(
    engine: &Engine,
    caller: &Caller,
    args: &CanvasGroupArgs,
) -> Result<Value, ToolError> {
    let group_id = engine.state().canvas.fresh_node_id(NodeKind::Group);
    let ids = engine.mutate(caller.project_id(), |project| {
        project.group(&group_id, &args.node_ids, args.title.as_deref())
    })?;
    Ok(answer(&CanvasGroupResult { node_id: group_id, node_ids: ids }))
}

pub(super) fn sticky_open(
    engine: &Engine,
    caller: &Caller,
    args: StickyOpenArgs,
) -> Result<Value, ToolError> {
    let node_id = engine.state().canvas.fresh_node_id(NodeKind::Sticky);
    let mut node = Node::new(node_id, NodeKind::Sticky, "Note".to_owned());
    node.text = Some(args.text);
    let node_id = engine.mutate(caller.project_id(), |project| Ok(project.add(node)))?;
    Ok(answer(&NodeResult { node_id }))
}

/// `artifact_open`: an existing node showing the same file in the same view is reused.
pub(super) fn artifact_open(
    engine: &Engine,
    caller: &Caller,
    args: &ArtifactOpenArgs,
) -> Result<Value, ToolError> {
    let project_id = caller.project_id();
    let view = args.view.unwrap_or(ArtifactView::Editor);
    let folder = engine.with_project(project_id, |project| project.folder.clone())?;
    let path = artifact_path(&folder, Path::new(&args.path))?;
    let existing = engine
        .project(project_id)?
        .nodes
        .iter()
        .find(|node| {
            node.kind == NodeKind::Artifact
                && node.path.as_deref() == Some(path.as_path())
                && node.view == Some(view)
        })
        .map(|node| node.id.clone());
    if let Some(node_id) = existing {
        return Ok(answer(&NodeResult { node_id }));
    }
    let node_id = engine.state().canvas.fresh_node_id(NodeKind::Artifact);
    let title = path
        .file_name()
        .map_or_else(|| "File".to_owned(), |name| name.to_string_lossy().into_owned());
    let mut node = Node::new(node_id, NodeKind::Artifact, title);
    node.path = Some(path);
    node.view = Some(view);
    let node_id = engine.mutate(project_id, |project| Ok(project.add(node)))?;
    Ok(answer(&NodeResult { node_id }))
}

/// Checks an `artifact_open` path: absolute, inside the project folder (after resolving links),
/// an existing regular file. Returns the canonical path.
pub(crate) fn artifact_path(folder: &Path, path: &Path) -> Result<PathBuf, ToolError> {
    if !path.is_absolute() {
        return Err(messages::ARTIFACT_RELATIVE.into());
    }
    let lexical = lexical_normal(path);
    if !lexical.starts_with(folder) {
        return Err(messages::ARTIFACT_OUTSIDE.into());
    }
    let Ok(canonical) = lexical.canonicalize() else {
        return Err(messages::ARTIFACT_MISSING.into());
    };
    if !canonical.starts_with(folder) {
        return Err(messages::ARTIFACT_OUTSIDE.into());
    }
    if !canonical.is_file() {
        return Err(messages::ARTIFACT_NOT_FILE.into());
    }
    Ok(canonical)
}

/// `path` with `.` and `..` components resolved without looking at the file system.
pub(crate) fn lexical_normal(path: &Path) -> PathBuf {
    path.components().fold(PathBuf::new(), |mut normal, component| {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
        normal
    })
}
