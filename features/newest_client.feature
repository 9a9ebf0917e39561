@newest-client
Feature: What the newest client reads and filters by
  The official client oz-agent-sdk 1.4.0-alpha.6 is newer than the
  published document (May 2026). It gets one agent identity by its uid,
  asks where a shared conversation or session lives without an API key
  (anyone holding the link may ask), sends runs with metadata and a mode,
  and filters runs by metadata, automation, executor and factory. A server
  built to the published document leaves these scenarios out with
  --tags 'not @newest-client'.

  Scenario: An agent identity is fetched by its uid with every field the client needs
    When I send "GET /agent/identities"
    And I remember the response field "agents.0.uid" as "agent"
    And I send "GET /agent/identities/{agent}"
    Then the response status is 200
    And the response field "uid" is "{agent}"
    And the answer has the identity fields the newest client needs

  Scenario: An agent identity that does not exist is a 404
    When I send "GET /agent/identities/agent-{unknown}"
    Then the response is a problem with status 404 and code "resource_not_found"

  @mock-only @writes
  Scenario: An agent's settings are kept and given back
    When I send "POST /agent/identities" with the body {"name": "Reviewer {label}", "agent_type": "REVIEW", "description": "Reviews pull requests", "skills": ["acme/api:review"], "secrets": [{"name": "GH_TOKEN"}], "harness": {"type": "codex", "reasoning_level": "high"}}
    Then the response status is 201
    And I remember the response field "uid" as "agent"
    When I send "GET /agent/identities/{agent}"
    Then the response field "agent_type" is "REVIEW"
    And the response field "skills.0" is "acme/api:review"
    And the response field "secrets.0.name" is "GH_TOKEN"
    And the response field "harness.type" is "codex"
    And the answer has the identity fields the newest client needs
    When I send "PUT /agent/identities/{agent}" with the body {"description": null, "skills": null}
    And I send "GET /agent/identities/{agent}"
    Then the response has no field "description"
    And the response field "skills" is "[]"

  @creates-runs
  Scenario: The session and conversation redirects answer without an API key
    When I create a run with the prompt "Check the redirect links"
    And I wait until the run is "INPROGRESS" or later
    And I fetch the run
    Then the run's session and conversation redirects answer without an API key

  @mock-only @mock-control @creates-runs
  Scenario: On the mock, a live conversation redirects to its session, and a finished session to its conversation
    When I create a run with the prompt "Watch me work"
    And the mock puts the run into "INPROGRESS"
    And I fetch the run
    Then the run's conversation redirects to its session, without an API key
    When the mock puts the run into "SUCCEEDED"
    And I fetch the run
    Then the run's conversation redirects nowhere, without an API key
    And the run's session redirects to its conversation, without an API key

  @creates-runs
  Scenario: Metadata is kept, given back and filtered on
    When I created these runs:
      | run | metadata.ticket_id | metadata.automation_id |
      | a   | VIS-1-{label}      | nightly-{label}        |
      | b   | VIS-2-{label}      | nightly-{label}        |
      | c   | VIS-1-{label}      | weekly-{label}         |
    And I fetch the run
    Then the run's "metadata.ticket_id" is "VIS-1-{label}"
    When I list runs with "metadata[ticket_id]=VIS-1-{label}"
    Then the listing holds exactly a and c
    When I list runs with "metadata[ticket_id]=VIS-1-{label}&metadata[automation_id]=nightly-{label}"
    Then the listing holds exactly a
    When I list runs with "automation_id=nightly-{label}"
    Then the listing holds exactly a and b

  @creates-runs
  Scenario: The executor and factory filters match what they name, and nothing else
    When I created these runs:
      | run |
      | a   |
    And I fetch the run
    And I list runs with "name={label}&executor=nobody-{unknown}"
    Then the listing holds exactly no runs
    When I list runs with "name={label}&factory_uid=factory-{unknown}"
    Then the listing holds exactly no runs
    When I list runs by the executor of the run
    Then the listing holds exactly a

  # An empty value names no one: it is no filter, or a request the server
  # refuses, never "the runs executed (or created) by no one". (An empty
  # metadata value is a value: metadata values may be empty.)
  @creates-runs
  Scenario Outline: An empty <filter> filter is no filter, or refused
    When I created these runs:
      | run |
      | a   |
      | b   |
    Then an empty "<filter>" added to "name={label}" lists the same runs, or is refused with a 400

    Examples:
      | filter   |
      | executor |
      | creator  |

  @creates-runs
  Scenario: The newest values are accepted
    When I create a run with the prompt "Plan the migration" and:
      | mode                     | plan  |
      | config.harness.type      | codex |
      | config.harness.model_id  | gpt-5 |
    Then the response status is 200
    When I fetch the run
    Then the run's "agent_config.harness.type" is "codex"
    When I list runs with "source=ORCHESTRATION&name={label}"
    Then the listing holds exactly no runs
    When I list runs with "artifact_type=EXTERNAL_REFERENCE&name={label}"
    Then the listing holds exactly no runs
