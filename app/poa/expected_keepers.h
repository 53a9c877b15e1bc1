// What the poa module needs from other modules: nothing. It keeps the validator set and the
// authority itself, and provides app::AuthorityKeeper (app/module.h) to every module that has
// params (their MsgUpdateParams ask it who the authority is).
#pragma once
