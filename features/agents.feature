Feature: The agents (skills) a run can take
  GET /agent lists the agents (skills) a caller can run: each name with one
  variant per SKILL.md, whose id (owner/repo:path) is what a run's skill
  takes. It creates nothing, so every scenario here is read-only. Names are
  in alphabetical order as people read it, letters of either case together;
  the suite takes the order of bytes as well. (The team's agent identities,
  which runs act as, are another thing: see identities.feature.)

  Scenario: The agents are ordered by name and every variant says where it lives
    When I list the agents
    Then the agents are ordered by name and every variant says where it lives

  Scenario: The agents can be ordered by last run and read again from the repositories
    When I list the agents with "sort_by=last_run&refresh=true&include_malformed_skills=true"
    Then the response status is 200

  # The published document gives this operation no 400: a server may
  # ignore an order it does not know. The mock refuses it.
  @mock-only
  Scenario: An unknown sort order is a 400
    When I list the agents with "sort_by=size"
    Then the response is a problem with status 400 and code "invalid_request"

  Scenario: Listing the agents needs a key
    When I send "GET /agent" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"
