Feature: Conversations and transcripts
  Everything a run's agent said and did is its conversation. GET
  /agent/runs/{runId}/conversation returns it in a normalised form: a list
  of steps, each with its messages in order (from the user, the assistant,
  a tool or the system; a conversation may open with the system's
  instructions before the user's prompt), each message made of blocks: text, an action the
  agent took, an action's result, or an event. GET
  /agent/conversations/{conversation_id} returns the same conversation by
  the id the run shows as conversation_id. A run created with
  conversation_id continues that conversation: its steps follow those of
  the runs before it.

  GET /agent/runs/{runId}/transcript answers 302 with a time-limited link
  to the run's raw transcript, which is downloaded without the API key (the
  link is its own credential). GET /agent/sessions/{sessionUuid}/redirect
  says whether a run's agent session (its session_id) should now be shown
  as a conversation: an object with the conversation_id once the agent's
  sandbox has finished, an empty object otherwise.

  The document allows a run without a conversation (404) and a conversation
  in a format the normalised form does not cover (422). A run the server
  ends before any worker claims it has none, so the scenarios that need
  one are skipped, saying so, when that happens. The scenarios that
  say when a conversation begins, how it grows and how it ends are what the
  bundled mock promises, and are tagged mock-only.

  A scenario that only looks at a finished run shares it with every
  scenario whose arrangement (its Given steps) is the same word for word
  (@shares-runs), in this feature and others: the run is made, and watched
  to its end, once. Asking for a transcript or a conversation changes no
  run.

  @creates-runs @slow @runs-as-written @shares-runs
  Scenario: A finished run's conversation begins with its prompt and stays the same
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When a worker took the run on
    And I fetch the run's conversation
    Then the conversation begins with the prompt "Tidy the README"
    And the conversation's messages are in time order, within the run's life
    And the conversation is the one the run shows
    When I fetch the conversation by its id
    Then it is the same conversation as before

  @creates-runs @slow @runs-as-written
  Scenario: A run created with conversation_id continues that conversation
    When I create a run with the prompt "Write the migration for the orders table"
    And I watch the run until it reaches a terminal state
    And a worker took the run on
    And I fetch the run
    And I remember the response field "conversation_id" as "conversation"
    And I create a run with the prompt "Now add a rollback for it" and:
      | conversation_id | {conversation} |
    And I watch the run until it reaches a terminal state
    And a worker took the run on
    And I send "GET /agent/conversations/{conversation}"
    Then the conversation holds the prompts "Write the migration for the orders table" and "Now add a rollback for it", in that order
    When I fetch the run's conversation
    Then it is the same conversation as before

  @creates-runs @slow @shares-runs
  Scenario: A finished run's transcript is a link that needs no API key
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When a worker took the run on
    And I ask for the run's transcript
    Then the answer redirects to an absolute URL
    And that URL, fetched without my API key, gives the transcript

  # The 302 gives no expires_at: the document says only that the link
  # works "for a limited time". A signed URL usually says until when in its
  # parameters (X-Goog-Expires, X-Amz-Expires, Expires; the mock's has
  # Expires); the suite waits for that instant within its patience
  # (--timeout), or moves the mock's clock there. A link that does not say,
  # or lives beyond the patience, leaves the scenario inconclusive, not
  # failed.
  @creates-runs @slow @shares-runs
  Scenario: A transcript link is refused once it has expired
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When a worker took the run on
    And I ask for the run's transcript
    Then that URL, fetched without my API key, gives the transcript
    And once that URL has expired, if it says when, it is refused

  @creates-runs @slow @shares-runs
  Scenario: A finished run's agent session points to its conversation, if anywhere
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I fetch the run
    Then the run's agent session, if it shows one, redirects to nothing or to the run's conversation

  Scenario: An unknown conversation is not found
    When I send "GET /agent/conversations/{unknown}"
    Then the response is a problem with status 404 and code "resource_not_found"

  Scenario: A run that does not exist has no conversation and no transcript
    When I send "GET /agent/runs/{unknown}/conversation"
    Then the response is a problem with status 404 and code "resource_not_found"
    When I send "GET /agent/runs/{unknown}/transcript"
    Then the response is a problem with status 404 and code "resource_not_found"

  Scenario: An unknown agent session needs no redirect
    When I send "GET /agent/sessions/{unknown}/redirect"
    Then the response status is 200
    And the response field "conversation_id" is null or absent

  # The session redirect is left out: the published document asks for a
  # key there, the newest client sends none (the scenarios tagged
  # @newest-client below).
  Scenario Outline: Conversations need a key: <operation>
    When I send "GET <path>" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

    Examples:
      | operation            | path                                |
      | a run's conversation | /agent/runs/{unknown}/conversation  |
      | a conversation       | /agent/conversations/{unknown}      |
      | a transcript         | /agent/runs/{unknown}/transcript    |

  @creates-runs @mock-control @mock-only @runs-as-written
  Scenario: A conversation begins when a worker claims the run, grows while it works, and ends with a summary
    Given the mock will end my next run in "SUCCEEDED", spending 2 seconds in each state
    When I create a run with the prompt "Update the changelog"
    And I fetch the run's conversation
    Then the response is a problem with status 404 and code "resource_not_found"
    When I wait until the run is "INPROGRESS" or later
    And I fetch the run's conversation
    Then the conversation begins with the prompt "Update the changelog"
    And the conversation has no summary yet
    When I watch the run until it reaches a terminal state
    And I fetch the run's conversation
    Then the conversation still shows what it showed before, and more
    And the conversation ends with a summary
    And the conversation's messages are in time order, within the run's life
    When I ask for the run's transcript
    Then the answer redirects to an absolute URL
    And that URL, fetched without my API key, gives a transcript holding "Update the changelog"
    When I fetch the run
    Then the run's agent session redirects to the run's conversation

  # The transcript link is its own credential, for a while: ten minutes on
  # the mock.
  @creates-runs @mock-control @mock-only
  Scenario: A transcript link stops working when it expires
    When I create a run with the prompt "List the open TODOs in the README"
    And I watch the run until it reaches a terminal state
    And I ask for the run's transcript
    Then that URL, fetched without my API key, gives the transcript
    When an hour passes on the mock's clock
    Then that URL is refused with status 403

  @creates-runs @mock-control
  Scenario: A run still at work has a session that redirects nowhere yet
    Given the mock will end my next run in "SUCCEEDED", spending 2 seconds in each state
    When I create a run with the prompt "Update the changelog"
    And I wait until the run is "INPROGRESS" or later
    And I fetch the run
    Then the run's agent session redirects nowhere yet

  # The same rule without the mock's clock: the suite asks for the redirect
  # of a run at work, then looks at the run again; only a run still at
  # work after the answer proves the answer came while it worked. A run
  # that ends first is replaced by a new one, three runs in all; if each
  # ends first, the scenario is inconclusive, saying so.
  @creates-runs
  Scenario: A run seen at work after its session's answer had no redirect yet
    When I create a run with the prompt "Update the changelog"
    And I wait until the run is "INPROGRESS" or later
    Then the run's agent session redirects nowhere while the run is seen at work after the answer

  @creates-runs @mock-control @mock-only
  Scenario: A failed run's conversation ends with its failure
    Given the mock will end my next run in "FAILED" with error code "insufficient_credits"
    When I create a run with the prompt "Deploy the preview environment"
    And I watch the run until it reaches a terminal state
    And I fetch the run's conversation
    Then the conversation ends with the event "run_failed" carrying the error code "insufficient_credits"

  @creates-runs @mock-only
  Scenario: A run cannot continue a conversation that does not exist
    When I post to "/agent/runs" the body {"prompt": "Carry on", "conversation_id": "1b6f0c52-8d7e-4f0a-9c3b-6a2e5d4f7c18"}
    Then the response is a problem with status 400 and code "invalid_request"

  # The newest official client (oz-agent-sdk 1.4.0-alpha.6), newer than the
  # published document (May 2026), asks where a shared conversation or
  # session lives without an API key: anyone holding the link may ask. The
  # suite judges these where the server serves that surface, or
  # --newest-client promises it.

  @creates-runs @newest-client
  Scenario: The session and conversation redirects answer without an API key
    When I create a run with the prompt "Check the redirect links"
    And I wait until the run is "INPROGRESS" or later
    And I fetch the run
    Then the run's session and conversation redirects answer without an API key

  @mock-only @mock-control @creates-runs @newest-client
  Scenario: On the mock, a live conversation redirects to its session, and a finished session to its conversation
    When I create a run with the prompt "Watch me work"
    And the mock puts the run into "INPROGRESS"
    And I fetch the run
    Then the run's conversation redirects to its session, without an API key
    When the mock puts the run into "SUCCEEDED"
    And I fetch the run
    Then the run's conversation redirects nowhere, without an API key
    And the run's session redirects to its conversation, without an API key
