//! The canvas model: projects (folders), their nodes, selection and agent links, persisted as
//! one JSON file (`D/canvas.json`) written atomically after every change.
//!
//! Everything here is pure data and rules with the contract's messages; the operations that also
//! drive tmux live in `ops.rs`.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use termsprawl_protocol::IntegrationStatus;
use termsprawl_protocol::args::ArtifactView;

use crate::error::{Error, ToolError, messages};

/// Minimum width and height of a node; browser nodes (which only the app has) need 320×240.
pub(crate) const MIN_SIZE: (f64, f64) = (240.0, 140.0);
/// Minimum size of a browser node.
pub(crate) const MIN_BROWSER_SIZE: (f64, f64) = (320.0, 240.0);
/// Maximum width and height of a node.
pub(crate) const MAX_SIZE: (f64, f64) = (8000.0, 8000.0);

/// Space between nodes placed automatically, and around the children of a new group.
const GAP: f64 = 40.0;
/// Height of a group's title bar.
const GROUP_TITLE: f64 = 40.0;
/// Nodes per row when new nodes are placed automatically.
const COLUMNS: u32 = 4;

/// The kind of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NodeKind {
    /// A plain shell terminal (`terminal_open`).
    Terminal,
    /// A terminal running an agent, with a tool session (`agent_launch`, `launch`).
    Agent,
    /// A sticky note.
    Sticky,
    /// A file shown in an editor or diff view.
    Artifact,
    /// A group frame.
    Group,
    /// A browser (never created here; kept so a canvas written by a richer server loads).
    Browser,
}

impl NodeKind {
    /// The wire name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NodeKind::Terminal => "terminal",
            NodeKind::Agent => "agent",
            NodeKind::Sticky => "sticky",
            NodeKind::Artifact => "artifact",
            NodeKind::Group => "group",
            NodeKind::Browser => "browser",
        }
    }

    /// Whether the node is backed by a tmux session.
    pub(crate) fn is_terminal(self) -> bool {
        matches!(self, NodeKind::Terminal | NodeKind::Agent)
    }

    fn default_size(self) -> (f64, f64) {
        match self {
            NodeKind::Terminal | NodeKind::Agent => (720.0, 440.0),
            NodeKind::Sticky => (260.0, 200.0),
            NodeKind::Artifact | NodeKind::Browser => (640.0, 480.0),
            NodeKind::Group => MIN_SIZE,
        }
    }

    fn min_size(self) -> (f64, f64) {
        if self == NodeKind::Browser { MIN_BROWSER_SIZE } else { MIN_SIZE }
    }
}

/// What an agent node remembers about its agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentInfo {
    /// The agent's name (`claude`, or the `--agent` of `launch`).
    pub(crate) name: String,
    /// The status the session was provisioned with; used when it is provisioned again.
    pub(crate) status: IntegrationStatus,
}

/// One node. Positions are relative to the parent group, or to the canvas for a top-level node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Node {
    /// The node id (`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`).
    pub(crate) id: String,
    /// The kind.
    pub(crate) kind: NodeKind,
    /// The title.
    pub(crate) title: String,
    /// Left edge.
    pub(crate) x: f64,
    /// Top edge.
    pub(crate) y: f64,
    /// Width.
    pub(crate) width: f64,
    /// Height.
    pub(crate) height: f64,
    /// The group it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parent_id: Option<String>,
    /// A sticky note's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    /// An artifact's absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<PathBuf>,
    /// An artifact's view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) view: Option<ArtifactView>,
    /// An agent node's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<AgentInfo>,
    /// A run node's command (`terminal_run`): its program is `sh -c COMMAND`, and its pane stays
    /// after the command exits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) command: Option<String>,
    /// When a terminal node's program started, in milliseconds since 1970 (`terminal_list`'s
    /// `startedAt`, protocol 1.5.0); absent for other kinds and in canvases written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) started_at: Option<u64>,
}

impl Node {
    /// A node of `kind` with its default size, at the origin.
    pub(crate) fn new(id: String, kind: NodeKind, title: String) -> Node {
        let (width, height) = kind.default_size();
        Node {
            id,
            kind,
            title,
            x: 0.0,
            y: 0.0,
            width,
            height,
            parent_id: None,
            text: None,
            path: None,
            view: None,
            agent: None,
            command: None,
            started_at: None,
        }
    }

    /// The node as `canvas_list` shows it; `running` tells whether a terminal's tmux session runs.
    pub(crate) fn to_value(&self, selected: bool, running: bool) -> Value {
        let mut object = Map::new();
        object.insert("nodeId".to_owned(), Value::from(self.id.as_str()));
        object.insert("kind".to_owned(), Value::from(self.kind.as_str()));
        object.insert("title".to_owned(), Value::from(self.title.as_str()));
        object.insert("x".to_owned(), number(self.x));
        object.insert("y".to_owned(), number(self.y));
        object.insert("width".to_owned(), number(self.width));
        object.insert("height".to_owned(), number(self.height));
        object.insert(
            "parentId".to_owned(),
            self.parent_id.as_deref().map_or(Value::Null, Value::from),
        );
        object.insert("selected".to_owned(), Value::Bool(selected));
        if self.kind.is_terminal() {
            object.insert("attached".to_owned(), Value::Bool(running));
        }
        if let Some(agent) = &self.agent {
            object.insert("agent".to_owned(), Value::from(agent.name.as_str()));
        }
        if let Some(text) = &self.text {
            object.insert("text".to_owned(), Value::from(text.as_str()));
        }
        if let Some(path) = &self.path {
            object.insert("path".to_owned(), Value::from(path.to_string_lossy().into_owned()));
        }
        if let Some(view) = self.view {
            object.insert("view".to_owned(), json!(view));
        }
        Value::Object(object)
    }

    fn overlaps(&self, x: f64, y: f64, width: f64, height: f64) -> bool {
        self.x < x + width
            && x < self.x + self.width
            && self.y < y + height
            && y < self.y + self.height
    }
}

/// A directed agent link: `from` may send requests to `to` ("Allow agent requests" enabled).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Link {
    /// The sender.
    pub(crate) from: String,
    /// The recipient.
    pub(crate) to: String,
}

/// A project: a folder, its nodes (in creation order), the selection and the agent links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Project {
    /// The project id.
    pub(crate) id: String,
    /// The project folder, absolute and canonical.
    pub(crate) folder: PathBuf,
    /// The nodes.
    #[serde(default)]
    pub(crate) nodes: Vec<Node>,
    /// The selected node ids.
    #[serde(default)]
    pub(crate) selection: Vec<String>,
    /// The enabled agent links.
    #[serde(default)]
    pub(crate) links: Vec<Link>,
}

impl Project {
    /// The node `id`.
    pub(crate) fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|node| node.id == id)
    }

    fn node_mut(&mut self, id: &str) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|node| node.id == id)
    }

    /// The node `id`, or `Node not found in the visible project`.
    pub(crate) fn existing(&self, id: &str) -> Result<&Node, ToolError> {
        self.node(id).ok_or_else(|| messages::NODE_NOT_FOUND.into())
    }

    /// Adds `node` at the first free slot of a grid of top-level positions; returns its id.
    pub(crate) fn add(&mut self, mut node: Node) -> String {
        let (width, height) = (node.width, node.height);
        let free = |x: f64, y: f64| {
            !self
                .nodes
                .iter()
                .filter(|other| other.parent_id.is_none())
                .any(|other| other.overlaps(x, y, width, height))
        };
        let mut slot: u32 = 0;
        let (x, y) = loop {
            let (column, row) = (f64::from(slot % COLUMNS), f64::from(slot / COLUMNS));
            let (x, y) = (column * (720.0 + GAP), row * (440.0 + GAP));
            if free(x, y) {
                break (x, y);
            }
            slot += 1;
        };
        node.x = x;
        node.y = y;
        let id = node.id.clone();
        self.nodes.push(node);
        id
    }

    /// `canvas_select`: every id must exist; duplicates are kept once, in order.
    pub(crate) fn select(&mut self, ids: &[String]) -> Result<Vec<String>, ToolError> {
        if ids.iter().any(|id| self.node(id).is_none()) {
            return Err(messages::SELECTION_UNKNOWN.into());
        }
        let selection = unique(ids);
        self.selection.clone_from(&selection);
        Ok(selection)
    }

    /// `canvas_move`.
    pub(crate) fn move_node(&mut self, id: &str, x: f64, y: f64) -> Result<(), ToolError> {
        let node = self.node_mut(id).ok_or(ToolError::new(messages::NODE_NOT_FOUND))?;
        node.x = x;
        node.y = y;
        Ok(())
    }

    /// `canvas_resize`: between the kind's minimum and 8000×8000.
    pub(crate) fn resize(&mut self, id: &str, width: f64, height: f64) -> Result<(), ToolError> {
        let node = self.node_mut(id).ok_or(ToolError::new(messages::NODE_NOT_FOUND))?;
        let (min_width, min_height) = node.kind.min_size();
        let fits = min_width <= width
            && width <= MAX_SIZE.0
            && min_height <= height
            && height <= MAX_SIZE.1;
        if !fits {
            return Err(messages::SIZE_RANGE.into());
        }
        node.width = width;
        node.height = height;
        Ok(())
    }

    /// `canvas_group`: wraps top-level non-group nodes in a new group sized around them; their
    /// positions become relative to the group. Returns the children's ids, each once.
    pub(crate) fn group(
        &mut self,
        group_id: &str,
        ids: &[String],
        title: Option<&str>,
    ) -> Result<Vec<String>, ToolError> {
        let ids = unique(ids);
        for id in &ids {
            self.existing(id)?;
        }
        let children: Vec<&Node> = ids.iter().filter_map(|id| self.node(id)).collect();
        if children.iter().any(|node| node.parent_id.is_some() || node.kind == NodeKind::Group) {
            return Err(messages::GROUP_TOP_LEVEL.into());
        }
        let left = children.iter().map(|node| node.x).fold(f64::INFINITY, f64::min);
        let top = children.iter().map(|node| node.y).fold(f64::INFINITY, f64::min);
        let right =
            children.iter().map(|node| node.x + node.width).fold(f64::NEG_INFINITY, f64::max);
        let bottom =
            children.iter().map(|node| node.y + node.height).fold(f64::NEG_INFINITY, f64::max);
        let mut group =
            Node::new(group_id.to_owned(), NodeKind::Group, title.unwrap_or("Group").to_owned());
        group.x = left - GAP;
        group.y = top - GAP - GROUP_TITLE;
        group.width = (right - left + 2.0 * GAP).max(MIN_SIZE.0);
        group.height = (bottom - top + 2.0 * GAP + GROUP_TITLE).max(MIN_SIZE.1);
        for node in &mut self.nodes {
            if ids.contains(&node.id) {
                node.x -= group.x;
                node.y -= group.y;
                node.parent_id = Some(group_id.to_owned());
            }
        }
        self.nodes.push(group);
        Ok(ids)
    }

    /// Removes a node with its selection entry and links; the children of a removed group
    /// become top-level again at their absolute positions.
    pub(crate) fn remove(&mut self, id: &str) -> Option<Node> {
        let index = self.nodes.iter().position(|node| node.id == id)?;
        let node = self.nodes.remove(index);
        for child in &mut self.nodes {
            if child.parent_id.as_deref() == Some(id) {
                child.x += node.x;
                child.y += node.y;
                child.parent_id.clone_from(&node.parent_id);
            }
        }
        self.selection.retain(|selected| selected != id);
        self.links.retain(|link| link.from != id && link.to != id);
        Some(node)
    }

    /// Enables the link `from` → `to` between two agent nodes; `false` if it was already enabled.
    pub(crate) fn link(&mut self, from: &str, to: &str) -> Result<bool, String> {
        for id in [from, to] {
            match self.node(id) {
                Some(node) if node.kind == NodeKind::Agent => {}
                Some(_) => return Err(format!("node {id} is not an agent node")),
                None => return Err(format!("node {id} is not in project {}", self.id)),
            }
        }
        if from == to {
            return Err("an agent cannot be linked to itself".to_owned());
        }
        if self.is_linked(from, to) {
            return Ok(false);
        }
        self.links.push(Link { from: from.to_owned(), to: to.to_owned() });
        Ok(true)
    }

    /// Disables the link `from` → `to`; `false` if there was none.
    pub(crate) fn unlink(&mut self, from: &str, to: &str) -> bool {
        let before = self.links.len();
        self.links.retain(|link| !(link.from == from && link.to == to));
        before != self.links.len()
    }

    /// Whether `from` may send requests to `to`.
    pub(crate) fn is_linked(&self, from: &str, to: &str) -> bool {
        self.links.iter().any(|link| link.from == from && link.to == to)
    }

    /// The recipients `from` may send requests to, in link order.
    pub(crate) fn enabled_peers(&self, from: &str) -> Vec<String> {
        self.links.iter().filter(|link| link.from == from).map(|link| link.to.clone()).collect()
    }

    /// `canvas_list`: every node in order; `running` holds the tmux session names that run.
    pub(crate) fn list_value(&self, running: &HashSet<String>) -> Value {
        Value::Array(
            self.nodes
                .iter()
                .map(|node| {
                    let selected = self.selection.contains(&node.id);
                    let is_running =
                        running.contains(&termsprawl_external_term::session_name(&node.id));
                    node.to_value(selected, is_running)
                })
                .collect(),
        )
    }
}

/// Every project of the data directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Canvas {
    /// The projects, in creation order.
    #[serde(default)]
    pub(crate) projects: Vec<Project>,
}

impl Canvas {
    /// Reads `path`; a missing file is an empty canvas. A file that does not parse is an error
    /// and is left alone.
    ///
    /// Valid JSON of another shape is refused too (issue 29): the file must be an object whose
    /// only member is `projects`, an array, as `Canvas::save` writes it; anything else (`[]`,
    /// `[[]]`, `{}`, another program's `{"schemaVersion":9,…}`) is not ours to overwrite.
    pub fn load(path: &Path) -> Result<Canvas, Error> {
        let invalid = |source| Error::Canvas { path: path.to_path_buf(), source };
        match fs::read(path) {
            Ok(content) => {
                let value: Value = serde_json::from_slice(&content).map_err(invalid)?;
                if let Some(problem) = shape_problem(&value) {
                    return Err(invalid(serde::de::Error::custom(problem)));
                }
                serde_json::from_value(value).map_err(invalid)
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Canvas::default()),
            Err(error) => Err(Error::io("read", path)(error)),
        }
    }

    /// `<path>.last-good`: a copy of the canvas file as it was last saved or loaded.
    pub(crate) fn last_good_file(path: &Path) -> PathBuf {
        let mut name = path.as_os_str().to_owned();
        name.push(".last-good");
        PathBuf::from(name)
    }

    /// After a successful [`Canvas::load`] of an existing file: keeps a copy of it as
    /// [`Canvas::last_good_file`] (written atomically), the copy `serve --recover` starts from
    /// (another program may have written the file since the last save).
    pub(crate) fn keep_last_good(path: &Path) -> io::Result<()> {
        match fs::read(path) {
            Ok(content) => {
                termsprawl_transport::server::write_atomic(&Canvas::last_good_file(path), &content)
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// `serve --recover` when [`Canvas::load`] refused `path`: moves it aside as
    /// `<path>.damaged-<unix seconds>` and puts the last good copy in its place if one is kept
    /// and loads, else leaves no canvas file (the start begins empty). Answers what was done, as
    /// one sentence for stderr.
    pub fn recover(path: &Path) -> io::Result<String> {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let mut aside = path.as_os_str().to_owned();
        aside.push(format!(".damaged-{seconds}"));
        let aside = PathBuf::from(aside);
        fs::rename(path, &aside)?;
        let last_good = Canvas::last_good_file(path);
        if last_good.exists() && Canvas::load(&last_good).is_ok() {
            let content = fs::read(&last_good)?;
            termsprawl_transport::server::write_atomic(path, &content)?;
            return Ok(format!(
                "moved the damaged canvas aside as {}; starting from the last good copy {}",
                aside.display(),
                last_good.display()
            ));
        }
        Ok(format!(
            "moved the damaged canvas aside as {}; no last good copy is kept, starting with an empty canvas",
            aside.display()
        ))
    }

    /// Writes the canvas to `path` compactly and atomically, mode 0600, and the same bytes to
    /// [`Canvas::last_good_file`], together: both change or neither does, so a damaged canvas
    /// file is recovered with everything saved.
    pub(crate) fn save(&self, path: &Path) -> io::Result<()> {
        let json = serde_json::to_vec(self).map_err(io::Error::other)?;
        let last_good = Canvas::last_good_file(path);
        termsprawl_transport::server::write_atomic_all(&[(path, &json), (&last_good, &json)])
    }

    /// The project `id`.
    pub(crate) fn project(&self, id: &str) -> Option<&Project> {
        self.projects.iter().find(|project| project.id == id)
    }

    /// The project `id`, mutable.
    pub(crate) fn project_mut(&mut self, id: &str) -> Option<&mut Project> {
        self.projects.iter_mut().find(|project| project.id == id)
    }

    /// The project of `folder` (canonical), created with a new id when there is none.
    pub(crate) fn ensure_project(&mut self, folder: &Path) -> &mut Project {
        if let Some(index) = self.projects.iter().position(|project| project.folder == folder) {
            return &mut self.projects[index];
        }
        let id = self.fresh_project_id(folder);
        self.projects.push(Project {
            id,
            folder: folder.to_path_buf(),
            nodes: Vec::new(),
            selection: Vec::new(),
            links: Vec::new(),
        });
        self.projects.last_mut().expect("just pushed")
    }

    /// The project a node belongs to.
    pub(crate) fn project_of(&self, node_id: &str) -> Option<&Project> {
        self.projects.iter().find(|project| project.node(node_id).is_some())
    }

    /// A node id not used in any project: `<kind>-<8 hex digits>`.
    pub(crate) fn fresh_node_id(&self, kind: NodeKind) -> String {
        loop {
            let id =
                format!("{}-{}", kind.as_str(), &uuid::Uuid::new_v4().simple().to_string()[..8]);
            if self.project_of(&id).is_none() {
                return id;
            }
        }
    }

    fn fresh_project_id(&self, folder: &Path) -> String {
        let base: String = folder
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
            .take(40)
            .collect();
        let base = if base.trim_matches('-').is_empty() { "project".to_owned() } else { base };
        loop {
            let id = format!("{base}-{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
            if self.project(&id).is_none() {
                return id;
            }
        }
    }
}

/// A JSON number that reads like the app's: integral values without a fraction.
pub(crate) fn number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if value.fract() == 0.0 && value.abs() < EXACT {
        #[expect(clippy::cast_possible_truncation, reason = "an integral value below 2^53")]
        return Value::from(value as i64);
    }
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

fn unique(ids: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    ids.iter().filter(|id| seen.insert(id.as_str())).cloned().collect()
}

/// What makes a canvas file's JSON not a canvas, if anything.
fn shape_problem(value: &Value) -> Option<String> {
    let Some(object) = value.as_object() else {
        return Some("the file must be a JSON object with a projects array".to_owned());
    };
    if let Some(unknown) = object.keys().find(|key| key.as_str() != "projects") {
        return Some(format!("unknown member {unknown:?} (a canvas has only projects)"));
    }
    match object.get("projects") {
        Some(Value::Array(_)) => None,
        Some(_) => Some("projects must be an array".to_owned()),
        None => Some("the projects member is missing".to_owned()),
    }
}

#[cfg(test)]
mod tests;
