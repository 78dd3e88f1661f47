import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { User } from './user';

// A one-time link to set a password: only the SHA-256 of the token is kept.
@Table({ tableName: 'user_setup_tokens', underscored: true, timestamps: true, updatedAt: false })
export class UserSetupToken extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => User)
  @Column({ type: DataType.UUID, allowNull: false })
  declare userId: string;

  @Column({ type: DataType.CHAR(64), allowNull: false, unique: true })
  declare tokenHash: string;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare expiresAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: true })
  declare usedAt: Date | null;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;
}
