-- A slot token (format 2, src/domain/slot-token.ts) carries the booking's length in 12 bits,
-- 1 to 4,095 minutes (68 hours): a schedule offering a longer period could hand out slots
-- whose tokens cannot be written. Refuse such a schedule where it is stored, whoever writes it.
ALTER TABLE scheduling.schedules ADD CONSTRAINT schedules_booking_periods_fit_slot_tokens
  CHECK (0 < ALL (booking_periods) AND 4095 >= ALL (booking_periods));
