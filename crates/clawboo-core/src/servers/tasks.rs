//! The Tasks server (`clawboo-tasks`): the board's tools, the reference's twelve and
//! `renew_task_lease` (their names, in order, are its entry in `servers::registry`).
//!
//! Owns: argument types, tool descriptions, the bound-team guard, the wire texts of every
//! outcome, and the claim-lease default ([`CLAIM_LEASE_ENV`]). Guarantees: when bound to a team, a
//! task of another team (or of none) is indistinguishable from a missing one (`not found: <id>`),
//! and the team of a created task is the bound team whatever the arguments say; the reads
//! (`get_task`, `list_tasks`) first return every task whose lease ran out to `todo`, so no tool
//! shows a task held by a lease that has run out; a `list_tasks` with `waitMs` waits for ready work
//! on the file's change feed ([`crate::db::Changes`]) and ends at once when the session does.
//!
//! Decision: claims get no lease unless asked (`leaseSeconds`, or the bin's
//! `CLAWBOO_CLAIM_LEASE_SECS`): the reference's claim holds a task until someone moves it, and a
//! board shared with agents that do not know to renew must not take work from them.
//!
//! Must never: touch SQL (the `board` repository does), or let an argument widen the bound team.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::binding::TasksBinding;
use crate::board::{
    self, Ancestor, AuthorType, BoardError, Caps, Comment, ListFilter, NewTask, Status, Task,
};
use crate::db::{Check, Db, Hangup};
use crate::log;
use crate::mcp::{Annotations, DomainError, Reply, Server, Tool, ToolError, ToolResult};

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "clawboo-tasks";

/// The environment variable giving every claim a lease of this many seconds unless the call says
/// otherwise (`leaseSeconds`); unset, blank or `0`, claims get none.
pub const CLAIM_LEASE_ENV: &str = "CLAWBOO_CLAIM_LEASE_SECS";

/// The longest a call may wait (`waitMs`), in milliseconds.
const MAX_WAIT_MS: u32 = 60_000;

/// The state behind the Tasks tools.
pub struct TasksState {
    db: Db,
    bound_team: Option<String>,
    caps: Caps,
    /// The lease a claim gets when its call names none, in seconds.
    default_lease: Option<i64>,
    /// Raised when the session ends: a waiting `list_tasks` returns at once.
    hangup: Hangup,
}

/// A tool-error of the Tasks server. A task that is missing or, on a bound session, belongs to
/// Wire: reference (keep the text; detail may only be appended).
/// another team is the board's own [`BoardError::NotFound`], so the two read the same.
#[derive(Debug, thiserror::Error)]
pub enum TasksError {
    /// A claim, release or status change was refused for `reason`: `<action> failed: <code…>`.
    #[error("{action} failed: {}", reason.reason())]
    Refused {
        /// `claim`, `release`, `status change`, `block`, `unblock` or `renew`.
        action: &'static str,
        /// Why.
        #[source]
        reason: BoardError,
    },
    /// Any other board refusal, with its own text.
    #[error(transparent)]
    Board(#[from] BoardError),
    /// A waiting call could not watch the database (`database error: …`, or why its watcher
    /// could not start).
    #[error(transparent)]
    Watch(#[from] crate::db::DbError),
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
    /// With ready=true: wait up to this many milliseconds (0..60000; default 0 answers at once)
    /// when nothing is ready; the call returns as soon as a task becomes ready, or at the deadline
    /// with [].
    #[schemars(range(min = 0, max = 60000))]
    wait_ms: Option<u32>,
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
    /// Hold the task only this many seconds (0..86400, where 0 is no lease) unless renewed. Left
    /// out, the board's default applies (none unless the operator set one).
    #[schemars(range(min = 0, max = 86400))]
    lease_seconds: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct RenewArgs {
    /// The task's id.
    task_id: String,
    /// The agent holding the task (the one that claimed it).
    assignee_agent_id: String,
    /// The lease's new length from now, in seconds (1..86400; default: the claim's).
    #[schemars(range(min = 1, max = 86400))]
    lease_seconds: Option<u32>,
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
    let wait_ms = a.wait_ms.unwrap_or(0);
    if wait_ms > 0 && !filter.ready {
        return Err(ToolError::invalid_args(
            "waitMs: waits only for ready work; pass ready=true with it",
        ));
    }
    let team = filter.team_id.as_deref().filter(|t| !t.is_empty());
    let wait = Duration::from_millis(wait_ms.min(MAX_WAIT_MS).into());
    let tasks = s.db.changes().wait_for(wait, &s.hangup, || {
        let conn = s.db.conn();
        board::expire_leases(&conn)?;
        let tasks = board::list(&conn, &filter)?;
        if !tasks.is_empty() || wait.is_zero() {
            return Ok::<_, TasksError>(Check::Ready(tasks));
        }
        // A lease running out makes work ready without a commit: look again then.
        let recheck = board::next_expiry(&conn, team)?.map(|at| {
            let left = u64::try_from(at.saturating_sub(conn.now_ms())).unwrap_or(0);
            Instant::now() + Duration::from_millis(left)
        });
        Ok(Check::NotYet {
            answer: tasks,
            recheck,
        })
    })?;
    Ok(Reply::json(&tasks))
}

fn get_task(s: &TasksState, a: TaskIdArgs) -> ToolResult {
    let conn = s.db.conn();
    board::expire_leases(&conn).map_err(TasksError::from)?;
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
    let lease = match a.lease_seconds {
        Some(0) => None,
        Some(seconds) => Some(i64::from(seconds)),
        None => s.default_lease,
    };
    let task = board::claim(
        &s.db.conn(),
        &a.task_id,
        &a.assignee_agent_id,
        a.assignee_runtime.as_deref(),
        lease,
    )
    .map_err(TasksState::refused("claim"))?;
    Ok(Reply::json(&task))
}

fn renew_task_lease(s: &TasksState, a: RenewArgs) -> ToolResult {
    s.guard(&a.task_id)?;
    let task = board::renew(
        &s.db.conn(),
        &a.task_id,
        &a.assignee_agent_id,
        a.lease_seconds.map(i64::from),
    )
    .map_err(TasksState::refused("renew"))?;
    Ok(Reply::json(&task))
}

/// The claim-lease default named by [`CLAIM_LEASE_ENV`]'s value: whole seconds, at most
/// [`board::MAX_LEASE_SECONDS`]; unset, blank or `0` is none. Anything else is the reason it
/// cannot be used.
fn default_lease(value: Option<&str>) -> Result<Option<i64>, String> {
    let Some(value) = crate::binding::given(value) else {
        return Ok(None);
    };
    match value.parse::<i64>() {
        Ok(0) => Ok(None),
        Ok(seconds) if (1..=board::MAX_LEASE_SECONDS).contains(&seconds) => Ok(Some(seconds)),
        _ => Err(format!(
            "{CLAIM_LEASE_ENV}: expected whole seconds from 0 to {}, got {value:?}; claims get no lease",
            board::MAX_LEASE_SECONDS
        )),
    }
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
/// team. Claims get the lease [`CLAIM_LEASE_ENV`] names, if it names one, unless a call says
/// otherwise (a value that cannot be used is logged and ignored).
pub fn build(db: Db, bound: Option<TasksBinding>) -> Server<TasksState> {
    let default_lease = default_lease(std::env::var(CLAIM_LEASE_ENV).ok().as_deref())
        .unwrap_or_else(|reason| {
            log::warn(&reason);
            None
        });
    build_with_lease(db, bound, default_lease)
}

/// [`build`] with the claim-lease default given.
fn build_with_lease(
    db: Db,
    bound: Option<TasksBinding>,
    default_lease: Option<i64>,
) -> Server<TasksState> {
    let bound_team = bound.map(|b| b.team_id);
    let list_description = format!(
        "{} Pass ready=true for only claimable (deps satisfied) work. To wait for work instead of polling, add waitMs (up to 60000): with nothing ready the call returns as soon as a task becomes ready, or after waitMs with [].",
        if bound_team.is_some() {
            "List your team's board tasks."
        } else {
            "List board tasks."
        }
    );
    let lease_note = match default_lease {
        Some(seconds) => format!(
            " This board gives every claim a {seconds} s lease unless leaseSeconds says otherwise (0 for none)."
        ),
        None => String::new(),
    };
    let claim_description = format!(
        "Atomically claim a todo task. A \"conflict\" error means another agent won — do not retry. With leaseSeconds the claim is a lease: renew it before leaseExpiresAt (renew_task_lease, or add_comment with your authorAgentId) or the task goes back to todo for another agent.{lease_note}"
    );
    let assign_description = format!(
        "Assign a todo task to an agent (same atomic claim; conflict means already assigned). leaseSeconds works as for claim_task.{lease_note}"
    );
    let hangup = db.changes().hangup();
    let state = TasksState {
        db,
        bound_team,
        caps: Caps::default(),
        default_lease,
        hangup,
    };
    // Annotations (mcp::annotations says what each word means): the board is this install's own
    // database, so no tool is open-world.
    Server::builder(SERVER_NAME, state)
        // Every handler is a few statements on this process's connection, but a list_tasks that
        // asks to wait, which says so.
        .handlers_never_wait()
        .on_close(|s: &TasksState| s.hangup.raise())
        .tool(
            Tool::new("list_tasks", list_description, list_tasks)
                .waits_when_given("waitMs")
                // Reads only. (A lease that has run out is already over: returning its task to
                // todo first only records that, as every read of the board does.)
                .annotations(Annotations::read_only("List tasks"))
                .output::<Vec<Task>>(),
        )
        .tool(
            Tool::new(
                "get_task",
                "Get a task with its comments and ancestor chain.",
                get_task,
            )
            // Reads only (leases as for list_tasks).
            .annotations(Annotations::read_only("Get a task"))
            // One task by its key, with its own comments and parents. (list_tasks reads the
            // whole board, so it is not.)
            .quick_read()
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
            Tool::new("claim_task", claim_description, claim_task)
                // Fills the empty assignee of a todo task, which release_task takes back. A repeat
                // changes nothing but answers "conflict", which reads as a lost race: not
                // retry-safe.
                .annotations(Annotations::additive("Claim a task"))
                .output::<Task>(),
        )
        .tool(
            Tool::new("assign_task", assign_description, claim_task)
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
        .tool(
            Tool::new(
                "renew_task_lease",
                "Renew your lease on a task you claimed with leaseSeconds: it runs leaseSeconds (default: the claim's length) from now. Renew well before leaseExpiresAt; once a lease has run out the task is back in todo and this call fails with lease_expired.",
                renew_task_lease,
            )
            // Moves the holder's own lease deadline later and nothing else; a repeat sets it to
            // the same length from now again (retry-safe), and a lease that ran out is refused.
            .annotations(Annotations::additive("Renew a task lease").idempotent())
            .output::<Task>(),
        )
        .build()
}

#[cfg(test)]
mod tests;
