"""Teams of specialists on the durable runtime (reference 004).

The pure contract layer (envelopes, receipts, result contracts, tier scoring, escalation, the team
gate and its trail), the file-canonical artifact :class:`Bus`, the specialist :class:`Registry`, and
the durable team itself (:mod:`agentrt.teams.team`): a lead agent that proposes a team, waits on the
gate as a durable ``task.ui.ask``, and runs each lane as a child run.
"""

from agentrt.exceptions import BusLockTimeout as BusLockTimeout
from agentrt.exceptions import ContractError as ContractError
from agentrt.exceptions import GateBlocked as GateBlocked
from agentrt.teams.bundle import build_bundle as build_bundle
from agentrt.teams.bundle import estimate_tokens as estimate_tokens
from agentrt.teams.bundle import lint_bundle as lint_bundle
from agentrt.teams.bundle import universal_layer as universal_layer
from agentrt.teams.bus import Bus as Bus
from agentrt.teams.bus import BusEvent as BusEvent
from agentrt.teams.bus import matches as matches
from agentrt.teams.contracts import Handoff as Handoff
from agentrt.teams.contracts import validate_contract as validate_contract
from agentrt.teams.contracts import validate_handoff as validate_handoff
from agentrt.teams.escalation import EscalationConfig as EscalationConfig
from agentrt.teams.escalation import advisor_prompt as advisor_prompt
from agentrt.teams.escalation import escalation_trigger as escalation_trigger
from agentrt.teams.gate import apply_decision as apply_decision
from agentrt.teams.gate import canonical_hash as canonical_hash
from agentrt.teams.gate import chain_entry as chain_entry
from agentrt.teams.gate import validate_proposal as validate_proposal
from agentrt.teams.gate import verify_trail as verify_trail
from agentrt.teams.receipts import parse_receipt as parse_receipt
from agentrt.teams.receipts import render_receipt as render_receipt
from agentrt.teams.registry import Registry as Registry
from agentrt.teams.registry import Specialist as Specialist
from agentrt.teams.tiers import Lane as Lane
from agentrt.teams.tiers import LaneScore as LaneScore
from agentrt.teams.tiers import TierConfig as TierConfig
from agentrt.teams.tiers import routing_line as routing_line
from agentrt.teams.tiers import score_lane as score_lane

__all__ = [
    "Bus",
    "BusEvent",
    "BusLockTimeout",
    "ContractError",
    "EscalationConfig",
    "GateBlocked",
    "Handoff",
    "Lane",
    "LaneScore",
    "Registry",
    "Specialist",
    "TierConfig",
    "advisor_prompt",
    "apply_decision",
    "build_bundle",
    "canonical_hash",
    "chain_entry",
    "escalation_trigger",
    "estimate_tokens",
    "lint_bundle",
    "matches",
    "parse_receipt",
    "render_receipt",
    "routing_line",
    "score_lane",
    "universal_layer",
    "validate_contract",
    "validate_handoff",
    "validate_proposal",
    "verify_trail",
]
