//! Asking the session's person a question through the client: MCP elicitation (form mode), with
//! one required single-choice field.
//!
//! Owns: [`Elicit`], the handle a handler receives (through [`Tool::asking`](super::Tool::asking))
//! when the person can be asked, and [`Asked`], one question on its way. Guarantees: a handle exists
//! only when the client declared the `elicitation` capability with form mode (an empty
//! `elicitation: {}` means form, as the spec says) **and** the request's protocol allows
//! server-to-client requests: `2026-07-28` forbids them (a stateless request has no channel back;
//! rmcp refuses them there), so on that version handlers get no handle. Asking never blocks: the
//! request runs on the session's runtime and its answer is read with [`Asked::answer`]; dropping
//! an [`Asked`] withdraws the question (`notifications/cancelled` to the client), so a question
//! decided elsewhere does not stay on the person's screen.
//!
//! Must never: know what is asked or why (the servers word their questions), or block a runtime
//! thread.

use std::sync::mpsc::{Receiver, TryRecvError, channel};

use rmcp::RoleServer;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ProtocolVersion, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use serde_json::{Value, json};

/// The person in the client, reachable by elicitation for the length of one call.
#[derive(Clone)]
pub struct Elicit {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Elicit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Elicit")
    }
}

/// One answer a question offers: the value sent back, and what the person reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The value the client sends back when the person picks it.
    pub value: &'static str,
    /// The label the person reads.
    pub title: &'static str,
}

/// A question: a message, and one required field whose answer is one of `choices`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// What the person reads first.
    pub message: String,
    /// The field's name in the form.
    pub field: &'static str,
    /// The field's label.
    pub title: &'static str,
    /// The answers offered.
    pub choices: &'static [Choice],
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited {
    /// The person accepted the form with this choice (one of the question's values).
    Chose(&'static str),
    /// The person declined.
    Declined,
    /// The person dismissed the form.
    Cancelled,
    /// No usable answer: the client failed, answered something that is not one of the choices,
    /// or the session ended.
    Failed(String),
}

/// A question on its way to the person. Dropping it withdraws the question.
#[derive(Debug)]
pub struct Asked {
    answer: Receiver<Elicited>,
    /// Dropped with the question: the request task then cancels the request at the client.
    _withdraw: tokio::sync::oneshot::Sender<()>,
}

impl Asked {
    /// The answer, once it has arrived (`None` while the person has not answered). Reports the
    /// answer once; after that, and after the session ends, `Failed`.
    pub fn answer(&self) -> Option<Elicited> {
        match self.answer.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                Some(Elicited::Failed("no answer can arrive any more".into()))
            }
        }
    }
}

impl Elicit {
    /// The handle for a request made with `context`, or `None` when the person cannot be asked
    /// (see the module's guarantees). Call it on the session's runtime.
    pub(super) fn for_request(context: &RequestContext<RoleServer>) -> Option<Self> {
        let protocol = context.protocol_version();
        if protocol.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str()) {
            return None;
        }
        let info = context.peer.peer_info()?;
        let capability = info.capabilities.elicitation.as_ref()?;
        let form = capability.form.is_some() || capability.url.is_none();
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        form.then(|| Self {
            peer: context.peer.clone(),
            runtime,
        })
    }

    /// Puts `question` to the person; the answer arrives in the returned [`Asked`].
    pub fn ask(&self, question: &Question) -> Asked {
        let (answer_tx, answer) = channel();
        let (withdraw, withdrawn) = tokio::sync::oneshot::channel::<()>();
        let peer = self.peer.clone();
        let choices = question.choices;
        let params = request_params(question);
        self.runtime.spawn(async move {
            let outcome = match params {
                Err(why) => Elicited::Failed(why),
                Ok(params) => ask_peer(&peer, params, choices, withdrawn).await,
            };
            let _ = answer_tx.send(outcome);
        });
        Asked {
            answer,
            _withdraw: withdraw,
        }
    }
}

/// The `elicitation/create` parameters of `question`.
fn request_params(question: &Question) -> Result<ElicitRequestParams, String> {
    let one_of: Vec<Value> = question
        .choices
        .iter()
        .map(|c| json!({"const": c.value, "title": c.title}))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {
            question.field: {"type": "string", "title": question.title, "oneOf": one_of}
        },
        "required": [question.field],
    });
    let requested_schema: ElicitationSchema =
        serde_json::from_value(schema).map_err(|e| format!("unusable question: {e}"))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message.clone(),
        requested_schema,
    })
}

/// Sends the request and waits for its answer, or cancels it at the client when the question is
/// withdrawn first.
async fn ask_peer(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
    choices: &'static [Choice],
    withdrawn: tokio::sync::oneshot::Receiver<()>,
) -> Elicited {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let mut handle = match peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
    {
        Ok(handle) => handle,
        Err(e) => return Elicited::Failed(e.to_string()),
    };
    // Withdrawal first: the question is dropped before the call's answer goes out, so a person's
    // answer that lands before this task is next polled must not win over it (an unbiased select
    // picks at random between two ready branches, and then no cancellation would be sent).
    tokio::select! {
        biased;
        _ = withdrawn => {
            let _ = handle.cancel(Some("decided elsewhere".into())).await;
            Elicited::Failed("withdrawn".into())
        }
        response = &mut handle.rx => match response {
            Ok(Ok(ClientResult::ElicitResult(result))) => match result.action {
                ElicitationAction::Accept => chosen(result.content.as_ref(), choices),
                ElicitationAction::Decline => Elicited::Declined,
                ElicitationAction::Cancel => Elicited::Cancelled,
                other => Elicited::Failed(format!("unknown action {other:?}")),
            },
            Ok(Ok(_)) => Elicited::Failed("the client answered with something else".into()),
            Ok(Err(e)) => Elicited::Failed(e.to_string()),
            Err(_) => Elicited::Failed("the session ended".into()),
        },
    }
}

/// The choice an accepted form's `content` names, if it names one of `choices` (the form's one
/// field is the only string in it).
fn chosen(content: Option<&Value>, choices: &'static [Choice]) -> Elicited {
    let picked = content
        .and_then(Value::as_object)
        .and_then(|fields| fields.values().find_map(Value::as_str));
    match picked.and_then(|p| choices.iter().find(|c| c.value == p)) {
        Some(choice) => Elicited::Chose(choice.value),
        None => Elicited::Failed(format!(
            "the accepted form names none of the choices: {}",
            content.map_or_else(|| "no content".to_owned(), Value::to_string)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHOICES: &[Choice] = &[
        Choice {
            value: "yes",
            title: "Yes",
        },
        Choice {
            value: "no",
            title: "No",
        },
    ];

    #[test]
    fn a_question_is_a_form_with_one_required_titled_choice() {
        let params = request_params(&Question {
            message: "Go?".into(),
            field: "answer",
            title: "Answer",
            choices: CHOICES,
        })
        .unwrap();
        let wire = serde_json::to_value(params).unwrap();
        assert_eq!(wire["mode"], "form");
        assert_eq!(wire["message"], "Go?");
        let schema = &wire["requestedSchema"];
        assert_eq!(schema["required"], json!(["answer"]));
        assert_eq!(
            schema["properties"]["answer"]["oneOf"],
            json!([{"const": "yes", "title": "Yes"}, {"const": "no", "title": "No"}])
        );
    }

    #[test]
    fn only_a_listed_choice_counts_as_an_answer() {
        assert_eq!(
            chosen(Some(&json!({"answer": "no"})), CHOICES),
            Elicited::Chose("no")
        );
        for content in [json!({"answer": "maybe"}), json!({}), json!("yes")] {
            assert!(matches!(
                chosen(Some(&content), CHOICES),
                Elicited::Failed(_)
            ));
        }
        assert!(matches!(chosen(None, CHOICES), Elicited::Failed(_)));
    }
}
