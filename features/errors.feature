Feature: Errors
  Every endpoint needs "Authorization: Bearer <API key>". Every failure is an
  RFC 7807 problem document sent as application/problem+json, with a "type"
  that ends in the error code, a "title", a "status" equal to the HTTP status,
  and an "error" joining title and detail for older clients. (The suite checks
  the problem shape on every error it receives, in every feature.)

  Scenario Outline: A request with <credentials> is refused with 401: <request>
    When I send "<request>" with <credentials>
    Then the response is a problem with status 401 and code "authentication_required"

    Examples:
      | request                           | credentials                                         |
      | GET /agent/runs                   | no Authorization header                             |
      | GET /agent/runs/{unknown}         | no Authorization header                             |
      | GET /agent/runs                   | the Authorization header "Bearer"                   |
      | GET /agent/runs                   | the Authorization header "Basic d2stbW9jay1hbGljZTo=" |
      | GET /agent/runs                   | the Authorization header "Token wk-abc123"          |

    # A server that wrongly took one of these would start or cancel a run,
    # so --read-only, which sends only GET and HEAD, leaves them out.
    @writes
    Examples:
      | request                           | credentials                                         |
      | POST /agent/run                   | no Authorization header                             |
      | POST /agent/runs                  | no Authorization header                             |
      | POST /agent/runs/{unknown}/cancel | no Authorization header                             |

  @writes
  Scenario: Cancelling an unknown run is not found
    When I cancel a run that does not exist
    Then the response is a problem with status 404 and code "resource_not_found"

  # A server that wrongly accepted one of these bodies would start a run, so
  # these scenarios count as creating runs and --read-only leaves them out.
  @creates-runs @runs-as-written
  Scenario Outline: A create request with <problem> is refused with 400
    When I post to "/agent/run" the body <body>
    Then the response is a problem with status 400 and code "invalid_request"

    Examples:
      | problem                        | body                                                          |
      | malformed JSON                 | {"prompt": "Fix the login test                                |
      | a body that is not an object   | ["Fix the login test"]                                        |
      | a prompt that is not a string  | {"prompt": 42}                                                |
      | a config that is not an object | {"prompt": "Fix the login test", "config": "fast"}            |
      | team that is not a boolean     | {"prompt": "Fix the login test", "team": "yes"}               |
      | an MCP server with no address  | {"prompt": "Fix the login test", "config": {"mcp_servers": {"broken": {}}}} |
      | no prompt and no skill         | {"title": "Nothing to do"}                                    |
      | an empty object                | {}                                                            |
