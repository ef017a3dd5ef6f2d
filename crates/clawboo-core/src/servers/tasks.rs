//! The Tasks server (`clawboo-tasks`): the board's twelve tools.
//!
//! Owns: argument types, tool descriptions, the bound-team guard and the wire texts of every
//! outcome. Guarantees: when bound to a team, a task of another team (or of none) is
//! indistinguishable from a missing one (`not found: <id>`), and the team of a created task is the
//! bound team whatever the arguments say.
//!
//! Must never: touch SQL (the `board` repository does), or let an argument widen the bound team.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::binding::TasksBinding;
use crate::board::{
    self, Ancestor, AuthorType, BoardError, Caps, Comment, ListFilter, NewTask, Status, Task,
};
use crate::db::Db;
use crate::mcp::{Annotations, DomainError, Reply, Server, Tool, ToolResult};

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "clawboo-tasks";

/// The state behind the Tasks tools.
pub struct TasksState {
    db: Db,
    bound_team: Option<String>,
    caps: Caps,
}

/// A tool-error of the Tasks server. A task that is missing or, on a bound session, belongs to
/// Wire: reference (keep the text; detail may only be appended).
/// another team is the board's own [`BoardError::NotFound`], so the two read the same.
#[derive(Debug, thiserror::Error)]
pub enum TasksError {
    /// A claim, release or status change was refused for `reason`: `<action> failed: <code…>`.
    #[error("{action} failed: {}", reason.reason())]
    Refused {
        /// `claim`, `release`, `status change`, `block` or `unblock`.
        action: &'static str,
        /// Why.
        #[source]
        reason: BoardError,
    },
    /// Any other board refusal, with its own text.
    #[error(transparent)]
    Board(#[from] BoardError),
}

impl DomainError for TasksError {
    fn denied_reason(&self) -> Option<&str> {
        match self {
            TasksError::Board(e) => e.cap_reason(),
            _ => None,
        }
    }
}

impl TasksState {
    /// Refuses, as if missing, a task outside the bound team.
    fn guard(&self, task_id: &str) -> Result<(), TasksError> {
        let Some(team) = &self.bound_team else {
            return Ok(());
        };
        let task = board::get(&self.db.conn(), task_id)?;
        match task {
            Some(t) if t.team_id.as_deref() == Some(team.as_str()) => Ok(()),
            _ => Err(BoardError::no_task(task_id).into()),
        }
    }

    fn refused(action: &'static str) -> impl Fn(BoardError) -> TasksError {
        move |reason| match reason {
            BoardError::Db(_) => TasksError::Board(reason),
            reason => TasksError::Refused { action, reason },
        }
    }

    fn move_to(&self, task_id: &str, to: Status, action: &'static str) -> ToolResult {
        self.guard(task_id)?;
        let task =
            board::update_status(&self.db.conn(), task_id, to).map_err(Self::refused(action))?;
        Ok(Reply::json(&task))
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ListTasksArgs {
    /// Only this team's tasks (ignored when the session is bound to a team).
    team_id: Option<String>,
    /// Only tasks in this status (ignored with ready=true).
    status: Option<Status>,
    /// Only claimable work: todo tasks whose dependencies are all done, most urgent first.
    ready: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TaskIdArgs {
    /// The task's id.
    task_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CreateTaskArgs {
    /// The title.
    title: String,
    /// A longer description.
    description: Option<String>,
    /// Initial status (default todo).
    status: Option<Status>,
    /// Priority; higher is more urgent (default 0).
    priority: Option<i64>,
    /// Owning team (ignored when the session is bound to a team).
    team_id: Option<String>,
    /// Make the task a subtask of this task.
    #[schemars(length(min = 1))]
    parent_task_id: Option<String>,
    /// The runtime expected to work on it.
    assignee_runtime: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CreateSubtaskArgs {
    /// The parent task's id.
    #[schemars(length(min = 1))]
    parent_task_id: String,
    /// The title.
    title: String,
    /// A longer description.
    description: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ClaimArgs {
    /// The task's id.
    task_id: String,
    /// The agent that takes the task.
    assignee_agent_id: String,
    /// The runtime the agent runs in.
    assignee_runtime: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct UpdateStatusArgs {
    /// The task's id.
    task_id: String,
    /// The target status.
    status: Status,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AddCommentArgs {
    /// The task's id.
    task_id: String,
    /// The comment text.
    body: String,
    /// The authoring agent.
    author_agent_id: Option<String>,
    /// Who wrote it (default agent).
    author_type: Option<AuthorType>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct LinkArgs {
    /// The task that waits.
    task_id: String,
    /// The task it waits on.
    depends_on_task_id: String,
}

/// `get_task`'s answer.
#[derive(Serialize, JsonSchema)]
struct TaskDetail {
    /// The task.
    task: Task,
    /// Its comments, oldest first.
    comments: Vec<Comment>,
    /// Its parent, the parent's parent, and so on.
    ancestors: Vec<Ancestor>,
}

fn list_tasks(s: &TasksState, a: ListTasksArgs) -> ToolResult {
    let filter = ListFilter {
        team_id: s.bound_team.clone().or(a.team_id),
        status: a.status,
        ready: a.ready == Some(true),
    };
    let tasks = board::list(&s.db.conn(), &filter).map_err(TasksError::from)?;
    Ok(Reply::json(&tasks))
}

fn get_task(s: &TasksState, a: TaskIdArgs) -> ToolResult {
    let conn = s.db.conn();
    let task = board::get(&conn, &a.task_id)
        .map_err(TasksError::from)?
        .filter(|t| s.bound_team.is_none() || t.team_id == s.bound_team)
        .ok_or_else(|| TasksError::from(BoardError::no_task(&a.task_id)))?;
    let comments = board::comments(&conn, &a.task_id).map_err(TasksError::from)?;
    let ancestors = board::ancestors(&conn, &a.task_id).map_err(TasksError::from)?;
    Ok(Reply::json(&TaskDetail {
        task,
        comments,
        ancestors,
    }))
}

fn create(s: &TasksState, new: NewTask) -> ToolResult {
    let conn = s.db.conn();
    let task = match &new.parent_task_id {
        Some(_) => board::create_subtask(&conn, &new, s.caps),
        None => board::create_root(&conn, &new, s.caps),
    }
    .map_err(TasksError::from)?;
    Ok(Reply::json(&task))
}

fn create_task(s: &TasksState, a: CreateTaskArgs) -> ToolResult {
    if let Some(parent) = &a.parent_task_id {
        s.guard(parent)?;
    }
    create(
        s,
        NewTask {
            title: a.title,
            description: a.description,
            status: a.status,
            priority: a.priority,
            team_id: s.bound_team.clone().or(a.team_id),
            parent_task_id: a.parent_task_id,
            assignee_runtime: a.assignee_runtime,
        },
    )
}

fn create_subtask(s: &TasksState, a: CreateSubtaskArgs) -> ToolResult {
    s.guard(&a.parent_task_id)?;
    create(
        s,
        NewTask {
            title: a.title,
            description: a.description,
            parent_task_id: Some(a.parent_task_id),
            ..NewTask::default()
        },
    )
}

fn claim_task(s: &TasksState, a: ClaimArgs) -> ToolResult {
    s.guard(&a.task_id)?;
    let task = board::claim(
        &s.db.conn(),
        &a.task_id,
        &a.assignee_agent_id,
        a.assignee_runtime.as_deref(),
    )
    .map_err(TasksState::refused("claim"))?;
    Ok(Reply::json(&task))
}

fn release_task(s: &TasksState, a: TaskIdArgs) -> ToolResult {
    s.guard(&a.task_id)?;
    board::release(&s.db.conn(), &a.task_id).map_err(TasksState::refused("release"))?;
    Ok(Reply::text(format!("released: {}", a.task_id)))
}

fn add_comment(s: &TasksState, a: AddCommentArgs) -> ToolResult {
    s.guard(&a.task_id)?;
    let comment = board::add_comment(
        &s.db.conn(),
        &a.task_id,
        &a.body,
        a.author_agent_id.as_deref(),
        a.author_type.unwrap_or(AuthorType::Agent),
    )
    .map_err(TasksError::from)?;
    Ok(Reply::json(&comment))
}

fn link_task(s: &TasksState, a: LinkArgs) -> ToolResult {
    s.guard(&a.task_id)?;
    s.guard(&a.depends_on_task_id)?;
    board::link(&s.db.conn(), &a.task_id, &a.depends_on_task_id).map_err(TasksError::from)?;
    Ok(Reply::text(format!(
        "linked: {} depends on {}",
        a.task_id, a.depends_on_task_id
    )))
}

/// Builds the Tasks server over `db`. With `bound`, every read and write is confined to that
/// team.
pub fn build(db: Db, bound: Option<TasksBinding>) -> Server<TasksState> {
    let bound_team = bound.map(|b| b.team_id);
    let list_description = if bound_team.is_some() {
        "List your team's board tasks. Pass ready=true for only claimable (deps satisfied) work."
    } else {
        "List board tasks. Pass ready=true for only claimable (deps satisfied) work."
    };
    let state = TasksState {
        db,
        bound_team,
        caps: Caps::default(),
    };
    // Annotations (mcp::annotations says what each word means): the board is this install's own
    // database, so no tool is open-world.
    Server::builder(SERVER_NAME, state)
        // Every handler is a few statements on this process's connection.
        .handlers_never_wait()
        .tool(
            Tool::new("list_tasks", list_description, list_tasks)
                // Reads only.
                .annotations(Annotations::read_only("List tasks"))
                .output::<Vec<Task>>(),
        )
        .tool(
            Tool::new(
                "get_task",
                "Get a task with its comments and ancestor chain.",
                get_task,
            )
            // Reads only.
            .annotations(Annotations::read_only("Get a task"))
            .output::<TaskDetail>(),
        )
        .tool(
            Tool::new(
                "create_task",
                "Create a board task. With parentTaskId set it is a subtask: the per-parent child-count and nesting-depth caps apply. Without one it is a root task, rate-limited per rolling window.",
                create_task,
            )
            // Adds a task; each call adds another.
            .annotations(Annotations::additive("Create a task"))
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "create_subtask",
                "Create a subtask under a parent (inherits the parent team). Capped per parent (child count) and by nesting depth.",
                create_subtask,
            )
            // Adds a task; each call adds another.
            .annotations(Annotations::additive("Create a subtask"))
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "claim_task",
                "Atomically claim a todo task. A \"conflict\" error means another agent won — do not retry.",
                claim_task,
            )
            // Fills the empty assignee of a todo task, which release_task takes back. A repeat
            // changes nothing but answers "conflict", which reads as a lost race: not retry-safe.
            .annotations(Annotations::additive("Claim a task"))
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "assign_task",
                "Assign a todo task to an agent (same atomic claim; conflict means already assigned).",
                claim_task,
            )
            // The same claim.
            .annotations(Annotations::additive("Assign a task"))
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "release_task",
                "Release an in-progress task back to todo.",
                release_task,
            )
            // Clears the assignee and the stored verification verdict; a repeat is refused and
            // changes nothing.
            .annotations(Annotations::destructive("Release a task").idempotent()),
        )
        .tool(
            Tool::new(
                "update_task_status",
                "Transition a task status (state-machine enforced; illegal transitions error).",
                |s: &TasksState, a: UpdateStatusArgs| {
                    s.move_to(&a.task_id, a.status, "status change")
                },
            )
            // Can close a task for good (done and cancelled are terminal); moving to the status a
            // task already has changes nothing.
            .annotations(Annotations::destructive("Change a task's status").idempotent())
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "block_task",
                "Mark a task blocked.",
                |s: &TasksState, a: TaskIdArgs| s.move_to(&a.task_id, Status::Blocked, "block"),
            )
            // A status move unblock_task undoes; blocking a blocked task changes nothing.
            .annotations(Annotations::additive("Block a task").idempotent())
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "unblock_task",
                "Unblock a task (back to todo).",
                |s: &TasksState, a: TaskIdArgs| s.move_to(&a.task_id, Status::Todo, "unblock"),
            )
            // A status move block_task undoes; a repeat changes nothing.
            .annotations(Annotations::additive("Unblock a task").idempotent())
            .output::<Task>(),
        )
        .tool(
            Tool::new(
                "add_comment",
                "Add a comment to a task (report-up summaries, system notes).",
                add_comment,
            )
            // Adds a comment; each call adds another.
            .annotations(Annotations::additive("Comment on a task"))
            .output::<Comment>(),
        )
        .tool(
            Tool::new(
                "link_task",
                "Make taskId depend on dependsOnTaskId (it stays unready until the dependency is done).",
                link_task,
            )
            // Adds a dependency; linking the same pair again changes nothing.
            .annotations(Annotations::additive("Link tasks").idempotent()),
        )
        .build()
}

#[cfg(test)]
mod tests;
