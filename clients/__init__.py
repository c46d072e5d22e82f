"""Programs that use Rodada from outside, as any client would: over the public
APIs alone, with none of the server's code."""
